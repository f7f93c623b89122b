#!/usr/bin/env python3
"""Closure check: every measured point of sweep results against `ptdp project
--calibration` of the same config, on the machine that ran both.

Measured time: the fastest iteration of the run, over every results file given
(each attempt of scripts/closure.sh measures afresh): on a shared machine other
processes only ever add time, and the calibration's benchmarks likewise count
by their fastest run. Points with more ranks than cores are
oversubscribed: their ranks take turns on a core, which no projection models;
they are reported, marked, and excepted from the bound.

Usage: closure.py --ptdp BIN --calibration FILE --bound 0.10 --out FILE [--ops OPS.json] [--sweep SWEEP.json]... RESULTS.json...
Exit 0 when every point that is not oversubscribed is within the bound (and,
with --ops, the compute per micro-batch), 1 otherwise, 2 when a file is refused
(not strict JSON, or a field it needs missing: named with its JSON pointer).
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "report"))
from ptdp_report.load import Refused, field, read_json, read_result, read_sweep_results, require  # noqa: E402

# What a measured point needs (its sweep definition's "base", "machine" and "name" are read likewise).
MEASURED = {"/result/metrics/iteration_s/min": "number", "/overrides": "object", "/label": None}
SWEEP = {"/name": "string", "/machine": None, "/base": "object"}


def project(ptdp, config, calibration, workdir):
    """Projected seconds per iteration of one config with the calibration."""
    cfg_file = os.path.join(workdir, "config.json")
    out_file = os.path.join(workdir, "projected.json")
    with open(cfg_file, "w") as f:
        json.dump(config, f)
    subprocess.run([ptdp, "project", "--config", cfg_file, "--calibration", calibration, "--out", out_file],
                   check=True, stdout=subprocess.DEVNULL)
    return field(read_result(out_file), "/metrics/iteration_s/median", out_file, "number")


def point_config(sweep_def, overrides):
    """The sweep's base config with a point's dotted overrides ("plan.tp": 2); tags left out."""
    config = copy.deepcopy(sweep_def["base"])
    config["machine"] = sweep_def["machine"]
    for key, value in overrides.items():
        section, _, name = key.partition(".")
        if section != "tag":
            config.setdefault(section, {})[name] = value
    return config


def point_label(point):
    return f"{point['series']} {point['label']}" if point.get("series") else point["label"]


def point_row(ptdp, calibration, sweep_def, point, measured, runs, cores, bound, workdir):
    config = point_config(sweep_def, point["overrides"])
    plan = config["plan"]
    ranks = plan.get("tp", 1) * plan.get("pp", 1) * plan.get("dp", 1)
    projected = project(ptdp, config, calibration, workdir)
    error = projected / measured - 1
    oversubscribed = ranks > cores
    return {"sweep": sweep_def["name"], "label": point_label(point), "ranks": ranks, "oversubscribed": oversubscribed,
            "measured_s": measured, "runs": runs, "projected_s": projected, "error": error,
            "within_bound": oversubscribed or abs(error) <= bound}


def fastest_points(results, defs):
    """(sweep definition, point, fastest measured seconds, runs) per point over every results file:
    the same point measured in several attempts counts by its fastest iteration."""
    best = {}
    for path in results:
        res = read_sweep_results(path)
        sweep_def = defs.get(res["sweep"]["name"])
        if sweep_def is None:  # the results name their sweep's file: the repository's sweeps/
            sweep_def = read_sweep(os.path.join(ROOT, "sweeps", field(res, "/sweep/file", path, "string")))
        for i, point in enumerate(res["points"]):
            if point.get("mode") == "measured" and point.get("status") == "ok" and point.get("result"):
                require(res, path, {f"/points/{i}{pointer}": kind for pointer, kind in MEASURED.items()})
                key = (sweep_def["name"], point_label(point))
                seconds = point["result"]["metrics"]["iteration_s"]["min"]
                kept = best.setdefault(key, {"def": sweep_def, "point": point, "seconds": seconds, "runs": 0})
                kept["runs"] += 1
                if seconds < kept["seconds"]:
                    kept.update(point=point, seconds=seconds)
    return [(b["def"], b["point"], b["seconds"], b["runs"]) for b in best.values()]


def read_sweep(path):
    """A sweep definition (sweeps/*.json) with what a point's config is made from."""
    return require(read_json(path), path, SWEEP)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), None)
    except OSError:
        return None


def closure_report(a, cores):
    """The ptdp.closure/1 document of the arguments' results: every measured point beside its projection."""
    defs = {}
    for path in a.sweep:
        d = read_sweep(path)
        defs[d["name"]] = d
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for sweep_def, point, measured, runs in fastest_points(a.results, defs):
            rows.append(point_row(a.ptdp, a.calibration, sweep_def, point, measured, runs, cores, a.bound, workdir))
    checked = [r for r in rows if not r["oversubscribed"]]
    first = next((p["result"] for path in a.results for p in read_sweep_results(path)["points"] if p.get("result")),
                 {})
    report = {"schema": "ptdp.closure/1", "calibration": a.calibration, "bound": a.bound, "cores": cores,
              "host": cpu_model(), "software": first.get("software"), "hardware": (first.get("run") or {}).get("hardware"),
              "load_average_at_end": os.getloadavg()[0],
              "measured": "fastest iteration over the attempts' runs", "points": rows,
              "pass": bool(checked) and all(r["within_bound"] for r in checked)}
    if a.ops:
        ops = read_json(a.ops)
        report["compute_per_micro_batch"] = ops
        report["pass"] = report["pass"] and field(ops, "/pass", a.ops, "bool")
    return report


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ptdp", required=True)
    ap.add_argument("--calibration", required=True)
    ap.add_argument("--bound", type=float, default=0.10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sweep", action="append", default=[], help="a sweep JSON the results came from (else sweeps/NAME)")
    ap.add_argument("--ops", help="scripts/op_closure.py's result: compute per micro-batch against its "
                    "benchmarked ops, kept in the report and part of the pass")
    ap.add_argument("results", nargs="+")
    a = ap.parse_args()
    cores = os.cpu_count() or 1
    try:
        report = closure_report(a, cores)
    except Refused as e:
        print(f"closure: refused: {e}", file=sys.stderr)
        return 2
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1)
    for r in report["points"]:
        mark = " (oversubscribed: excepted)" if r["oversubscribed"] else ("" if r["within_bound"] else "  OUT OF BOUND")
        print(f"{r['sweep']:>16} {r['label']:<28} measured {r['measured_s']:.4f} s  projected {r['projected_s']:.4f} s"
              f"  error {100 * r['error']:+6.1f}%{mark}")
    checked = [r for r in report["points"] if not r["oversubscribed"]]
    print(f"closure: {len(checked)} points checked{' and compute per micro-batch' if a.ops else ''}, bound {100 * a.bound:.0f}%: {'pass' if report['pass'] else 'FAIL'}")
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
