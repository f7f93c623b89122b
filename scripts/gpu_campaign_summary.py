#!/usr/bin/env python3
"""Summary of a GPU campaign's folder (scripts/gpu_campaign.sh): one markdown
table of the training results (ptdp and the PyTorch baseline), the micro-batch
attempts, the GEMM ceiling and each step's status. Standard library only.

Usage: gpu_campaign_summary.py WORK [WORK2 ...] > summary.md
Several folders (e.g. the unpacked archives of part 1 and part 2) are merged.
"""
import glob
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def lines(path):
    try:
        with open(path) as f:
            return [l.rstrip("\n").split("\t") for l in f if l.strip()]
    except OSError:
        return []


def pct(x):
    return "" if x is None else f"{100 * x:.1f}%"


def num(x, fmt):
    return "" if x is None else format(x, fmt)


def result_row(path, r):
    """(model, system, mode, b, recompute, iteration s, MFU, HFU, paper TFLOP/s, peak GiB, tokens/s)."""
    m, p, mt = r.get("model", {}), r.get("plan", {}), r.get("metrics", {})
    name = os.path.basename(path)[:-5].split("-")  # SYSTEM-MODEL-RC-bMB or projected-MODEL-RC-bMB
    model = f"{name[1]} ({m.get('layers')}L, h={m.get('hidden')}, s={m.get('seq_len')})" if len(name) >= 4 else "?"
    mem = (mt.get("memory_bytes") or {})
    peak = mem.get("peak_measured") if r.get("mode") != "projected" else mem.get("peak_model")
    it = (mt.get("iteration_s") or {}).get("median")
    return [model, r.get("system", "?"), r.get("mode", "?"), str(p.get("micro_batch", "")), p.get("recompute", ""),
            num(it, ".4g"), pct(mt.get("mfu")), pct(mt.get("hfu")), num(mt.get("model_tflops_per_gpu"), ".4g"),
            num(None if peak is None else peak / 2**30, ".3g"), num(mt.get("tokens_per_s"), ".0f")]


def closure_lines(folders):
    """The closure step's check: iteration time against the calibrated projection, and compute
    per micro-batch against the sum of its benchmarked ops (scripts/op_closure.py)."""
    out = []
    for w in folders:
        d = os.path.join(w, "closure")
        measured, projected, ops = (load(os.path.join(d, f"{k}.json")) for k in ("measured", "projected", "ops"))
        if not measured:
            continue
        out += ["", "## Closure on this GPU (1.7B, micro-batch 4, the kernels step's shapes)", ""]
        m = measured["metrics"]["iteration_s"]["median"]
        if projected:
            p = projected["metrics"]["iteration_s"]["median"]
            out += [f"- iteration: measured {m:.4g} s, projected with this GPU's calibration {p:.4g} s "
                    f"({100 * (p / m - 1):+.1f}%)"]
        for direction, r in ((ops or {}).get("directions") or {}).items():
            out += [f"- compute per micro-batch, {direction}: runtime {1e3 * r['measured_s']:.3f} ms, sum of its "
                    f"benchmarked ops {1e3 * r['sum_of_ops_s']:.3f} ms ({100 * r['excess']:+.1f}%)"]
    return out


def main(folders):
    out = ["# ptdp GPU campaign: summary", ""]
    env = next((l for w in folders for l in lines(os.path.join(w, "env.txt")) if l and l[0].startswith("gpu:")), None)
    if env:
        out += [f"- {env[0]}"]
    for w in folders:
        g = load(os.path.join(w, "gemm_ceiling.json"))
        if g:
            for k, v in g.items():
                label = f"{v['tflops']:.0f} TFLOP/s" if "tflops" in v and v["tflops"] else v.get("error", "?")
                out += [f"- GEMM ceiling, {k}{' (' + v['name'] + ')' if 'name' in v else ''}: {label}"]
    out += ["", "MFU: model FLOPs without recompute (72·B·s·l·h²·(1 + s/6h + V/12lh)) per second over the dense "
            "peak of the machine profile; HFU: FLOPs executed (96 form under full recompute) over the same peak; "
            "paper TFLOP/s: eq. (3) (counts the recompute forward under full recompute) per GPU.", ""]
    header = ["model", "system", "mode", "micro-batch", "recompute", "iteration s", "MFU", "HFU", "paper TFLOP/s",
              "peak memory GiB", "tokens/s"]
    out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    rows = []
    for w in folders:
        for path in sorted(glob.glob(os.path.join(w, "train", "*.json")) + glob.glob(os.path.join(w, "baseline", "*.json"))):
            r = load(path)
            if r:
                rows.append(result_row(path, r))
    rows.sort(key=lambda r: (r[0], r[4], r[2], r[1]))
    out += ["| " + " | ".join(r) + " |" for r in rows] or ["| (no results) |" + " |" * (len(header) - 1)]
    out += closure_lines(folders)
    attempts = [a for w in folders for a in lines(os.path.join(w, "attempts.tsv"))]
    if attempts:
        out += ["", "## Micro-batch attempts (largest first; the first ok is the headline)", "",
                "| system | model | recompute | micro-batch | outcome |", "|---|---|---|---|---|"]
        out += ["| " + " | ".join(a) + " |" for a in attempts]
    out += ["", "## Steps", "", "| part | step | status | seconds | notes |", "|---|---|---|---|---|"]
    for w in folders:
        out += ["| " + " | ".join(s + [""] * (5 - len(s))) + " |" for s in lines(os.path.join(w, "status.tsv"))]
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
