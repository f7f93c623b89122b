#!/usr/bin/env python3
"""The folder dependency order of ptdp's C++ code, checked against the intended levels.

Reads every #include "..." of the C++ sources and headers under core/ and the top
(endtoend/, microbench/, tests/, fuzz/), draws the graph of folders (core/<name>;
core/kernels/cpu and core/kernels/cuda their own; the top one folder), and exits 1
on an include into a folder of the same or a higher level, a folder LEVELS does not
list, a cycle, or more than --max-depth levels (2 when --root has no core/).
--print draws the levels.
"""
import argparse
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

# The intended order, one line a folder: a folder includes only folders of lower
# levels (or itself). The top (programs and tests) is one folder.
LEVELS = {
    "core/io": 0,
    "core/process": 0,
    "core/schedule": 0,
    "core/tensor": 0,
    "core/topology": 0,
    "core/config": 1,
    "core/data": 1,
    "core/kernels": 1,
    "core/kernels/cpu": 2,
    "core/kernels/cuda": 2,
    "core/launch": 2,
    "core/layer_ops": 2,
    "core/comm": 3,
    "core/model": 4,
    "core/optim": 5,
    "core/accounting": 3,
    "core/results": 4,
    "core/gate": 5,
    "core/checkpoint": 6,
    "core/sim": 6,
    "core/runtime": 7,
    "core/sweep": 7,
    "top": 8,
}
TOP_FOLDERS = ("endtoend", "microbench", "tests", "fuzz")
SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh"}
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.MULTILINE)


def folder_of(path):
    """The folder a repository path ("core/sim/projector.h") belongs to, or None outside the code."""
    parts = path.split("/")
    if parts[0] in TOP_FOLDERS:
        return "top"
    if parts[0] != "core" or len(parts) < 2:
        return None
    if len(parts) >= 4 and parts[1] == "kernels" and parts[2] in ("cpu", "cuda"):
        return "/".join(parts[:3])
    return "/".join(parts[:2]) if len(parts) > 2 else "core"


def sources(root):
    """The C++ sources and headers under root's core/ and top folders."""
    for top in ("core",) + TOP_FOLDERS:
        for f in sorted((root / top).rglob("*")):
            if f.suffix in SOURCE_SUFFIXES and f.is_file():
                yield f


def folder_graph(root):
    """{folder: {included folder: ["file includes path", ...]}}: the folder graph and the includes behind each edge."""
    graph = defaultdict(lambda: defaultdict(list))
    for f in sources(root):
        src = f.relative_to(root).as_posix()
        a = folder_of(src)
        graph[a]  # a folder counts even when it includes no other
        for name in INCLUDE.findall(f.read_text(encoding="utf-8", errors="replace")):
            local = Path(os.path.normpath(f.parent / name))  # "util.h" beside the file
            inc = local.relative_to(root).as_posix() if local.is_file() else name
            b = folder_of(inc)
            if b is not None and b != a:
                graph[a][b].append(f"{src} includes {inc}")
                graph[b]
    return graph


def cycles(graph):
    """The strongly connected groups of more than one folder (Tarjan), each sorted."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(groups)


def heights(graph, groups):
    """Each folder's level as the graph gives it: 0 includes nothing, else one above
    the highest folder it includes; a cycle's folders share one level."""
    group_of = {v: tuple(g) for g in groups for v in g}
    memo = {}

    def height(v):
        key = group_of.get(v, (v,))
        if key not in memo:
            below = [w for u in key for w in graph[u] if group_of.get(w, (w,)) != key]
            memo[key] = 1 + max(map(height, below)) if below else 0
        return memo[key]

    return {v: height(v) for v in graph}


def longest_chain(graph):
    """The longest chain of includes that visits no folder twice (depth-first; the graph is small)."""
    best = []

    def extend(chain, seen):
        nonlocal best
        if len(chain) > len(best):
            best = list(chain)
        for w in sorted(graph[chain[-1]]):
            if w not in seen:
                extend(chain + [w], seen | {w})

    for v in sorted(graph):
        extend([v], {v})
    return best


def upward(graph):
    """Messages for each include into a folder of the same or a higher level, or one not in LEVELS."""
    out = []
    for a in sorted(graph):
        if a not in LEVELS:
            out.append(f"{a} is in no level of LEVELS (scripts/layers.py): add a line for it")
            continue
        for b, whys in sorted(graph[a].items()):
            if b in LEVELS and LEVELS[b] >= LEVELS[a]:
                out += [f"{why}: {a} (level {LEVELS[a]}) may include only lower levels; {b} is level {LEVELS[b]}"
                        for why in whys]
    return out


def draw(height):
    """The table's levels, highest first, each with its folders; "(graph: n)" where a
    folder's includes put it at another level than the table's."""
    lines = []
    for level in sorted(set(LEVELS.values()), reverse=True):
        names = [f + (f" (graph: {height[f]})" if f in height and height[f] != level else "")
                 for f in sorted(LEVELS) if LEVELS[f] == level]
        lines.append(f"{level:2d}  " + "  ".join(names))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1], help="the source tree")
    ap.add_argument("--max-depth", type=int, default=9, help="most levels allowed (default 9)")
    ap.add_argument("--print", action="store_true", help="draw the levels")
    args = ap.parse_args(argv)
    if not (args.root / "core").is_dir():
        print(f"layers: --root {args.root}: no core/ folder there", file=sys.stderr)
        return 2
    graph = folder_graph(args.root)
    groups = cycles(graph)
    height = heights(graph, groups)
    chain = longest_chain(graph)
    problems = upward(graph)
    for g in groups:
        edges = "; ".join(graph[a][b][0] for a in g for b in g if b in graph[a])
        problems.append(f"cycle {' <-> '.join(g)}: {edges}")
    if len(chain) > args.max_depth:
        problems.append(f"depth {len(chain)} levels, over {args.max_depth}: {' -> '.join(chain)}")
    if args.print:
        print(draw(height))
    for p in problems:
        print(f"layers: {p}", file=sys.stderr)
    print(f"layers: {len(graph)} folders, depth {len(chain)} levels ({' -> '.join(chain)}), "
          f"{len(groups)} cycle(s), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
