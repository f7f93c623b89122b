#!/usr/bin/env python3
"""summary.md of a GPU campaign's work folder (scripts/gpu_campaign.py), or of
its unpacked archives: the GPU and versions, each step's status, the GPU
tests, the headline run beside its projections and the PyTorch baseline, the
micro-batch attempts, the GEMM ceiling and closure, the slices and the kernel
times. Standard library only.

Usage: gpu_campaign_summary.py WORK [WORK ...] > summary.md
"""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "report"))
from campaign.ncu import kernel_times  # noqa: E402
from ptdp_report.load import read_or_none  # noqa: E402  (a step may have left no file: None)


def table(path):
    """Rows of a tab-separated file with a header line, as dicts."""
    try:
        with open(path) as f:
            lines = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    except OSError:
        return []
    return [dict(zip(lines[0], l)) for l in lines[1:]] if lines else []


def pct(x):
    return "" if x is None else f"{100 * x:.1f}%"


def num(x, fmt):
    return "" if x is None else format(x, fmt)


def result_row(label, r):
    """model, system, how obtained, micro-batch, recompute, iteration s, MFU, paper TFLOP/s, peak GiB, tokens/s."""
    m, p, mt = r.get("model", {}), r.get("plan", {}), r.get("metrics", {})
    mem = mt.get("memory_bytes") or {}
    peak = mem.get("peak_model") if str(r.get("mode")).startswith("projected") else mem.get("peak_measured")
    return [label, r.get("system", "ptdp"), r.get("mode", "?"), str(p.get("micro_batch", "")), p.get("recompute", ""),
            num((mt.get("iteration_s") or {}).get("median"), ".4g"), pct(mt.get("mfu")),
            num(mt.get("model_tflops_per_gpu"), ".4g"), num(None if peak is None else peak / 2**30, ".3g"),
            num(mt.get("tokens_per_s"), ".0f")]


def model_label(key, r):
    m = r.get("model", {})
    return f"{key} ({m.get('layers')}L h={m.get('hidden')} s={m.get('seq_len')})"


def training_rows(work):
    """Per (model, recompute, micro-batch): ptdp measured, its projection on the profile,
    the calibrated projection (headline), the PyTorch baseline."""
    found = {}
    for folder in ("headline", "baseline", "more"):
        for path in glob.glob(os.path.join(work, folder, "*-*-*-b*.json")):
            system, key, recompute, b = os.path.basename(path)[:-5].split("-")[:4]
            r = read_or_none(path)
            if r and "metrics" in r:
                found[(key, recompute, int(b[1:]), system)] = r
    rows = []
    for (key, recompute, b, system), r in sorted(found.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2],
                                                                                   kv[0][3] != "ptdp")):
        rows.append(result_row(model_label(key, r), r))
        projected = r.get("projected")
        if system == "ptdp" and isinstance(projected, dict) and projected.get("metrics"):
            rows.append(result_row(model_label(key, r), {**r, **projected, "mode": "projected (profile)"}))
        calibrated = read_or_none(os.path.join(work, "kernels", "projected-calibrated.json"))
        if system == "ptdp" and calibrated and (key, recompute) == ("1.7b", "none"):
            rows.append(result_row(model_label(key, r), {**calibrated, "mode": "projected (this device's calibration)"}))
    return rows


def section_tests(work):
    rows = table(os.path.join(work, "tests.tsv"))
    if not rows:
        return []
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    out = ["", "## GPU tests", "", ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + f" of {len(rows)}"]
    bad = [r for r in rows if r["status"] not in ("passed", "skipped")]
    if bad:
        out += ["", "| test | status | note | alone |", "|---|---|---|---|"]
        out += [f"| {r['test']} | {r['status']} | {r['note'][:160]} | {r.get('alone', '')[:160]} |" for r in bad[:40]]
    return out


def main_sections(work):
    out = []
    env = read_or_none(os.path.join(work, "env.json")) or {}
    if env:
        v = env.get("versions") or {}
        out += [f"- GPU: {env.get('gpu') or 'none'} ({env.get('gpu_memory_mib')} MiB); pack commit "
                f"{(env.get('pack') or {}).get('commit')}",
                f"- CUDA runtime {v.get('cuda_runtime')}, driver {v.get('cuda_driver')}, cuBLASLt {v.get('cublaslt')}, "
                f"cuDNN {v.get('cudnn')}, NCCL {v.get('nccl')}, memory pools {v.get('memory_pools_supported')}; "
                f"torch {(env.get('torch') or {}).get('torch')}"]
    status = table(os.path.join(work, "status.tsv"))
    if status:
        out += ["", "## Steps", "", "| step | status | seconds | notes |", "|---|---|---|---|"]
        out += [f"| {r['step']} | {r['status']} | {r['seconds']} | {r['note'][:400]} |" for r in status]
    out += section_tests(work)
    rows = training_rows(work)
    if rows:
        head = ["model", "system", "mode", "micro-batch", "recompute", "iteration s", "MFU", "paper TFLOP/s",
                "peak GiB", "tokens/s"]
        out += ["", "## Training", "", "MFU: model FLOPs without recompute over the profile's dense peak; "
                "projected rows are ptdp's simulator on the machine profile (or this GPU's calibration), never "
                "a measurement.", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
    attempts = table_with_header(os.path.join(work, "attempts.tsv"),
                                 ["system", "model", "recompute", "micro_batch", "status", "exit", "reason"])
    if attempts:
        out += ["", "## Micro-batch attempts", ""] + [
            f"- {a['system']} {a['model']} {a['recompute']} b={a['micro_batch']}: {a['status']} (exit {a['exit']})"
            + (f": {a['reason'][:200]}" if a.get("reason") else "") for a in attempts]
    return out + section_kernels(work) + section_slices(work)


def table_with_header(path, header):
    try:
        with open(path) as f:
            return [dict(zip(header, l.rstrip("\n").split("\t"))) for l in f if l.strip()]
    except OSError:
        return []


def section_kernels(work):
    out = []
    for name, label in (("ceiling-ptdp.json", "ptdp"), ("ceiling-torch.json", "PyTorch")):
        doc = read_or_none(os.path.join(work, "kernels", name)) or {}
        run = next(iter(doc.get("benchmarks", [])), {})
        tflops = doc.get("tflops") or run.get("TFLOP/s")
        if tflops:
            shape = "x".join(str(int(run[k])) for k in ("m", "n", "k")) if "m" in run else "8192x8192x8192"
            out.append(f"- GEMM ceiling, {shape}, {label}: {tflops:.3g} TFLOP/s")
    ops = read_or_none(os.path.join(work, "kernels", "ops.json")) or {}
    for direction, r in (ops.get("directions") or {}).items():
        out.append(f"- op closure, {direction} per micro-batch: runtime {1e3 * r['measured_s']:.3f} ms, sum of its "
                   f"benchmarked ops {1e3 * r['sum_of_ops_s']:.3f} ms ({100 * r['excess']:+.1f}%)")
    for csv in sorted(glob.glob(os.path.join(work, "ncu", "layer-*.csv"))):
        times = sorted(kernel_times(csv).items(), key=lambda kv: -kv[1])
        if times:
            out.append(f"- Nsight Compute, {os.path.basename(csv)[:-4]}: {sum(t for _, t in times) * 1e3:.3f} ms in "
                       f"{len(times)} kernels; longest: " +
                       ", ".join(f"{k[:60]} {t * 1e3:.3f} ms" for k, t in times[:3]))
    return ["", "## Kernels", ""] + out if out else []


def section_slices(work):
    out = []
    for path in sorted(glob.glob(os.path.join(work, "slices", "*.json"))):
        r = read_or_none(path) or {}
        s, mt = r.get("slice") or {}, r.get("metrics") or {}
        out.append(f"- {os.path.basename(path)[:-5]}: stage {s.get('stage')} measured "
                   f"{num(s.get('measured_iteration_s'), '.4g')} s per iteration; projected whole configuration "
                   f"{num((mt.get('iteration_s') or {}).get('median'), '.4g')} s, "
                   f"{num(mt.get('model_tflops_per_gpu'), '.4g')} TFLOP/s per GPU (mode {r.get('mode')})")
    return ["", "## Slices of Table 1 (one stage measured, the rest projected)", ""] + out if out else []


def render(*works):
    out = ["# ptdp GPU campaign: summary", ""]
    for work in works:
        out += main_sections(work)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: gpu_campaign_summary.py WORK [WORK ...]")
    sys.stdout.write(render(*sys.argv[1:]))
