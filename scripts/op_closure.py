#!/usr/bin/env python3
"""The runtime's compute per micro-batch against the sum of its ops as
ptdp_bench_kernels measures them at the same shapes (issue 15): does training
spend time outside its kernels, or do the benchmarks measure something else?

What a single-rank micro-batch runs is not written here: ptdp_bench_kernels
marks each part it times with how often a forward (counter part_forward) and a
backward (part_backward) run it, from the model and the layer's op records
(core/layer_ops/layer_ops.h): the embedding, every layer's forward and the head's
forward; the head's backward, every layer's backward (after its forward again
where recompute re-runs it) and the embedding's backward. Each of the layer's
ops is marked likewise (op_forward, op_backward: its records of that kind and
sizes times the layers), so beside the judged sum the layers' time is set
against the sum of their ops. Measured: the median F and B of the run's trace
(the last iteration's micro-batches). Each benchmark counts by its fastest run
and each trace by its median, over every file given (attempts of scripts/closure.sh).

Usage: op_closure.py --config FILE --kernels K.json... --trace T.json[.gz]... --bound 0.10 --out FILE
Exit 0 when forward and backward are both within the bound, 1 when not, 2 on
input this check does not cover (more than one rank, benchmarks of another
config or without the counts) or refuses (not strict JSON, a field missing).
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "report"))
from ptdp_report.load import field, parse_json, read_benchmarks, read_json, require  # noqa: E402

UNIT_S = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
COUNTERS = ("part_forward", "part_backward", "op_forward", "op_backward", "layers_run")


def benchmark_of(run):
    """A run's benchmark: its name without the arguments Google Benchmark appends."""
    return "/".join(p for p in run["name"].split("/") if ":" not in p and not p.startswith("manual_time"))


def fastest_benchmarks(files):
    """({benchmark: {"seconds": fastest, counter: value}}, the first file's context) over every iteration run."""
    best, context = {}, None
    for path in files:
        doc = read_benchmarks(path)
        context = context if context is not None else doc.get("context", {})
        for i, run in enumerate(doc["benchmarks"]):
            if run.get("run_type") != "iteration" or run.get("error_occurred"):
                continue
            seconds = field(doc, f"/benchmarks/{i}/real_time", path, "number") * UNIT_S[run.get("time_unit", "ns")]
            name = benchmark_of(run)
            if name not in best or seconds < best[name]["seconds"]:
                best[name] = {"seconds": seconds, **{k: run[k] for k in COUNTERS if k in run}}
    return best, context


def trace_medians(files):
    """(forward, backward) seconds per micro-batch: each trace's median, the smallest over traces."""
    forward, backward = [], []
    for path in files:
        doc = read_json(path)
        events = field(doc, "/traceEvents", path, "array") if isinstance(doc, dict) else doc
        durations = {"F": [], "B": []}
        for e in events:
            kind = e.get("name", "")[:2]
            if e.get("ph") == "X" and kind in ("F(", "B("):
                durations[kind[0]].append(e["dur"] * 1e-6)
        if not durations["F"] or not durations["B"]:
            raise ValueError(f"{path}: no F(...) or B(...) events: not a ptdp train --trace file")
        forward.append(statistics.median(durations["F"]))
        backward.append(statistics.median(durations["B"]))
    return min(forward), min(backward)


def check_same_config(config, context):
    """The benchmarks' counts hold for the config they ran at (context ptdp_shapes)."""
    shapes = parse_json(context.get("ptdp_shapes", "null") or "null", "the kernel benchmarks' context ptdp_shapes")
    if shapes is None:
        return
    ran = (shapes["model"].get("layers"), shapes["plan"].get("recompute", "none"))
    given = (config["model"]["layers"], config["plan"].get("recompute", "none"))
    if ran != given:
        raise ValueError(f"the kernel benchmarks ran for layers, recompute = {ran}, not the config's {given}")


def whole(count):
    """A count as Google Benchmark writes it (a double), as an integer where it is one."""
    return int(count) if count == int(count) else count


def sums(bench, direction):
    """(parts [(benchmark, count, seconds each)], the layers' seconds, their ops' seconds) of one direction."""
    part, op = f"part_{direction}", f"op_{direction}"
    parts = [(n, whole(b[part]), b["seconds"]) for n, b in sorted(bench.items()) if b.get(part)]
    layers = sum(b[part] * b["seconds"] for b in bench.values() if b.get(part) and "layers_run" in b)
    ops = sum(b[op] * b["seconds"] for b in bench.values() if b.get(op))
    return parts, layers, ops


def check(bench, measured, bound):
    out = {"bound": bound, "directions": {}}
    for direction, seconds in zip(("forward", "backward"), measured):
        parts, layers, ops = sums(bench, direction)
        if not parts:
            raise ValueError(f"the kernel benchmarks hold no part_{direction} counts: rerun ptdp_bench_kernels")
        total = sum(count * each for _, count, each in parts)
        out["directions"][direction] = {
            "measured_s": seconds, "sum_of_ops_s": total, "excess": seconds / total - 1,
            "parts": [{"benchmark": n, "count": c, "seconds_each": each} for n, c, each in parts],
            "layers_s": layers, "sum_of_layer_ops_s": ops}
    out["pass"] = all(abs(d["excess"]) <= bound for d in out["directions"].values())
    return out


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--kernels", nargs="+", required=True)
    parser.add_argument("--trace", nargs="+", required=True)
    parser.add_argument("--bound", type=float, default=0.10)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        config = require(read_json(args.config), args.config, {"/model/layers": "number", "/plan": "object"})
        plan = config["plan"]
        ranks = plan.get("tp", 1) * plan.get("pp", 1) * plan.get("dp", 1)
        if ranks != 1:
            raise ValueError(f"plan.tp·pp·dp = {ranks}: the check covers a single-rank run")
        bench, context = fastest_benchmarks(args.kernels)
        check_same_config(config, context)
        result = check(bench, trace_medians(args.trace), args.bound)
    except (ValueError, KeyError) as e:
        print(f"op_closure: {e}", file=sys.stderr)
        return 2
    result["measured"] = "median micro-batch of a trace, the smallest over traces; ops by their fastest run"
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    for direction, d in result["directions"].items():
        print(f"  compute per micro-batch, {direction:8s}: runtime {1e3 * d['measured_s']:.3f} ms, "
              f"sum of its benchmarked ops {1e3 * d['sum_of_ops_s']:.3f} ms, {100 * d['excess']:+.1f}%"
              + ("" if abs(d["excess"]) <= args.bound else "  OUT OF BOUND")
              + f" (layers {1e3 * d['layers_s']:.3f} ms, their ops {1e3 * d['sum_of_layer_ops_s']:.3f} ms)")
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
