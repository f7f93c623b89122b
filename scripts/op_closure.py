#!/usr/bin/env python3
"""The runtime's compute per micro-batch against the sum of its ops as
ptdp_bench_kernels measures them at the same shapes (issue 15): does training
spend time outside its kernels, or do the benchmarks measure something else?

A single-rank run's forward of one micro-batch is the embedding forward, every
layer's forward and the head's forward; its backward is the head's backward,
every layer's backward (after its forward again under full recompute) and the
embedding backward. Measured: the median F and B of the run's trace (the last
iteration's micro-batches). Each benchmark counts by its fastest run and each
trace by its median, over every file given (attempts of scripts/closure.sh).

Usage: op_closure.py --config FILE --kernels K.json... --trace T.json[.gz]... --bound 0.10 --out FILE
Exit 0 when forward and backward are both within the bound, 1 when not, 2 on
input this check does not cover (more than one rank).
"""
import argparse
import gzip
import json
import statistics
import sys

UNIT_S = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def fastest_benchmarks(files):
    """{benchmark family ("layer/fwd"): fastest seconds} over every iteration run of the files."""
    best = {}
    for path in files:
        with open(path) as f:
            doc = json.load(f)
        for run in doc["benchmarks"]:
            if run.get("run_type") != "iteration" or run.get("error_occurred"):
                continue
            family = "/".join(run["name"].split("/")[:2])
            seconds = run["real_time"] * UNIT_S[run.get("time_unit", "ns")]
            best[family] = min(best.get(family, seconds), seconds)
    return best


def trace_medians(files):
    """(forward, backward) seconds per micro-batch: each trace's median, the smallest over traces."""
    forward, backward = [], []
    for path in files:
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            doc = json.load(f)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
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


def op_sums(config, bench):
    """Per direction, [(part, count, seconds each)] of one micro-batch on a single rank."""
    layers = config["model"]["layers"]
    full_recompute = config["plan"].get("recompute", "none") == "full"
    forward = [("embedding/fwd", 1), ("layer/fwd", layers), ("head/fwd", 1)]
    backward = [("head/bwd", 1), ("layer/bwd", layers), ("embedding/bwd", 1)]
    if full_recompute:
        backward.insert(1, ("layer/fwd", layers))
    missing = [name for name, _ in forward + backward if name not in bench]
    if missing:
        raise ValueError(f"kernel benchmarks lack {', '.join(sorted(set(missing)))}: rerun ptdp_bench_kernels")
    return {"forward": [(n, c, bench[n]) for n, c in forward], "backward": [(n, c, bench[n]) for n, c in backward]}


def check(config, bench, measured, bound):
    sums = op_sums(config, bench)
    out = {"bound": bound, "directions": {}}
    for direction, seconds in zip(("forward", "backward"), measured):
        parts = sums[direction]
        total = sum(count * each for _, count, each in parts)
        out["directions"][direction] = {
            "measured_s": seconds, "sum_of_ops_s": total, "excess": seconds / total - 1,
            "parts": [{"benchmark": n, "count": c, "seconds_each": each} for n, c, each in parts]}
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
    with open(args.config) as f:
        config = json.load(f)
    plan = config["plan"]
    ranks = plan.get("tp", 1) * plan.get("pp", 1) * plan.get("dp", 1)
    if ranks != 1:
        print(f"op_closure: plan.tp·pp·dp = {ranks}: the check covers a single-rank run", file=sys.stderr)
        return 2
    try:
        result = check(config, fastest_benchmarks(args.kernels), trace_medians(args.trace), args.bound)
    except (ValueError, KeyError) as e:
        print(f"op_closure: {e}", file=sys.stderr)
        return 2
    result["measured"] = "median micro-batch of a trace, the smallest over traces; ops by their fastest run"
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    for direction, d in result["directions"].items():
        print(f"  compute per micro-batch, {direction:8s}: runtime {1e3 * d['measured_s']:.3f} ms, "
              f"sum of its benchmarked ops {1e3 * d['sum_of_ops_s']:.3f} ms, {100 * d['excess']:+.1f}%"
              + ("" if abs(d["excess"]) <= args.bound else "  OUT OF BOUND"))
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
