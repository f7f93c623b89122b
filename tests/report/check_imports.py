#!/usr/bin/env python3
"""No import circle among the Python modules of report/ (ptdp_report and its scripts) and
scripts/ (the campaign package and the scripts beside it): every import statement, at the
top or inside a function, read from the syntax tree (nothing is imported), each edge one
module naming another of these folders' modules. Standard library only (label report).

Usage: check_imports.py        exit 0: no circle; 1: each circle printed, as a path of modules
"""
import ast
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = (ROOT / "report", ROOT / "scripts")   # each a top of the import path, as the scripts make it


def modules_of(folder):
    """{dotted name: file} of every .py under folder (a package is named by its __init__.py)."""
    found = {}
    for path in sorted(folder.rglob("*.py")):
        parts = list(path.relative_to(folder).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts:
            found[".".join(parts)] = path
    return found


def _package_of(name, path):
    """The package a module's relative imports start from."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imported(name, path, known):
    """The known modules that module `name` (at `path`) imports, anywhere in its body."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package_of(name, path).split(".")
                package = package[:len(package) - node.level + 1]
                base = ".".join(p for p in package + [base] if p)
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)  # "from pkg import module"
    return {m for m in out if m in known and m != name}


def graph(folders):
    """{module: the known modules it imports} over every module of the folders."""
    known = {}
    for folder in folders:
        known.update(modules_of(folder))
    return {name: imported(name, path, known) for name, path in known.items()}


def circles(edges):
    """Each import circle found by a depth-first walk, as [a, b, ..., a]."""
    state, stack, found = {}, [], []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node)
    return found


class ImportCircles(unittest.TestCase):
    def test_report_and_scripts_have_none(self):
        edges = graph(FOLDERS)
        self.assertEqual(circles(edges), [])
        self.assertIn("ptdp_report.tables", edges["ptdp_report.closure"])   # the walk sees imports at all
        self.assertIn("ptdp_report.load", edges["campaign.steps"])

    def test_a_circle_through_a_function_level_import_is_found(self):
        with tempfile.TemporaryDirectory() as tmp:
            pkg = Path(tmp) / "pkg"
            pkg.mkdir()
            (pkg / "__init__.py").write_text("")
            (pkg / "a.py").write_text("from .b import f\n")
            (pkg / "b.py").write_text("def f():\n    from pkg.c import g\n")
            (pkg / "c.py").write_text("from pkg import a\n")
            (pkg / "d.py").write_text("from . import c\nimport pkg.b\n")
            self.assertEqual(circles(graph([Path(tmp)])), [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]])


if __name__ == "__main__":
    result = unittest.main(exit=False).result
    if result.failures:
        for cycle in circles(graph(FOLDERS)):
            print("import circle: " + " -> ".join(cycle), file=sys.stderr)
    sys.exit(0 if result.wasSuccessful() else 1)
