"""The GPU campaign's later steps: the PyTorch baseline, the 350M model and the
recompute variants, the Llama block, slices of Table 1 rows and Nsight Compute
kernel times of one layer. Standard library only.
"""
import glob
import os
import shutil

from campaign import steps, training
from campaign.ncu import kernel_times
from campaign.outcome import FAILED, OK, combined, of_exit
from campaign.runner import StepSkipped, write_json
from ptdp_report.load import read_json, read_or_none

# Table 1 rows sliced on this GPU (tag.params of sweeps/table1.json): one stage of
# each at its tensor-parallel shard, iterations of a few seconds on an H100.
SLICED_ROWS = ("18.4B", "39.1B")


def step_baseline(ctx, room):
    """The PyTorch baseline (torch.compile, bf16 autocast, SDPA) of the headline run: the same
    model, micro-batch, global batch and iterations."""
    ctx.need_gpu()
    if not ctx.has_torch():
        raise StepSkipped(f"no torch in {ctx.python}")
    first = ctx.micro_batch.get(("1.7b", "none"))
    out, _, outcome = training.train(ctx, "pytorch", "1.7b", "none", room, "baseline", first=first)
    if out:
        ratio(ctx, "1.7b", "none", out)
    return outcome


def ratio(ctx, model, recompute, baseline):
    b = read_or_none(baseline)["plan"]["micro_batch"]
    mine = read_or_none(ctx.path("headline" if (model, recompute) == ("1.7b", "none") else "more",
                              f"ptdp-{model}-{recompute}-b{b}.json"))
    theirs = read_or_none(baseline)["metrics"]["iteration_s"]["median"]
    if mine:
        ours = mine["metrics"]["iteration_s"]["median"]
        ctx.runner.note(f"{model} {recompute} b={b}: ptdp {ours:.4g} s, PyTorch {theirs:.4g} s per iteration: "
                        f"ptdp {theirs / ours:.2f}x as fast")
    else:
        ctx.runner.note(f"{model} {recompute}: PyTorch ran at b={b}, ptdp did not")


def step_more(ctx, room):
    """The 350M model and full recompute (ptdp, then PyTorch at ptdp's micro-batch), and the
    Llama block: the tiny Llama on the GPU against the CPU backend."""
    ctx.need_gpu()
    torch = ctx.has_torch()
    outcomes = []
    for model, recompute in (("350m", "none"), ("1.7b", "full"), ("350m", "full")):
        share = room / 4
        out, b, outcome = training.train(ctx, "ptdp", model, recompute, share, "more")
        outcomes.append(outcome)
        if out:
            ctx.micro_batch[(model, recompute)] = b
            if torch:
                base, _, _ = training.train(ctx, "pytorch", model, recompute, share, "more", first=b)
                if base:
                    ratio(ctx, model, recompute, base)
    return combined([llama(ctx, room / 4)] + outcomes)


def llama(ctx, room):
    """endtoend/configs/tiny-llama.json, 5 iterations from the same seed on this device (bf16,
    cuDNN attention) and on the CPU (fp32): every loss within 3% (bf16 over a few iterations)."""
    base = read_json(os.path.join(ctx.root, "endtoend", "configs", "tiny-llama.json"))
    losses = {}
    for name, device, precision, attention in (("cpu", "cpu", "fp32", "unfused"),
                                              ("dev", ctx.device, "bf16" if ctx.device == "cuda" else "fp32",
                                               "flash" if ctx.device == "cuda" else "unfused")):
        c = dict(base, plan=dict(base["plan"], tp=1, pp=1, dp=1, precision=precision, attention=attention))
        c.pop("machine", None)
        config, out = ctx.path("configs", f"llama-{name}.json"), ctx.path("more", f"llama-{name}.json")
        write_json(config, c)
        rc = ctx.runner.run([ctx.bin("ptdp"), "train", "--config", config, "--device", device, "--iterations", "5",
                             "--warmup", "0", "--out", out], ctx.path("logs", f"llama-{name}.log"), room / 2, ctx.env)
        result = read_or_none(out) if rc == 0 else None
        if not result:
            ctx.runner.note(f"tiny Llama on {device}: exit {rc}" + ("" if rc else ", no result"))
            return of_exit(rc) if rc else FAILED
        losses[name] = result["metrics"]["loss"]
    worst = max(abs(g - c) / c for g, c in zip(losses["dev"], losses["cpu"]))
    ok = worst <= 0.03 and len(losses["dev"]) == len(losses["cpu"])
    ctx.runner.note(f"tiny Llama, {ctx.device} against the CPU: worst loss difference {100 * worst:.2f}%"
                    + ("" if ok else ", BEYOND 3%"))
    return OK if ok else FAILED


def step_slices(ctx, room):
    """ptdp slice of Table 1 rows: the heaviest pipeline stage measured at its shard shapes on
    this GPU, the whole configuration projected on a cluster of it."""
    ctx.need_gpu()
    if ctx.device != "cuda" or not ctx.machine:
        raise StepSkipped("slices need a GPU and its machine profile")
    sweep = read_json(os.path.join(ctx.root, "sweeps", "table1.json"))
    outcomes = []
    for row in SLICED_ROWS:
        point = next(p for p in sweep["points"] if p.get("tag.params") == row)
        c = {"model": dict(sweep["base"]["model"]), "plan": dict(sweep["base"]["plan"]), "machine": ctx.machine}
        for key, value in point.items():
            section, _, field = key.partition(".")
            if section in ("model", "plan"):
                c[section][field] = value
        config, out = ctx.path("configs", f"slice-{row}.json"), ctx.path("slices", f"table1-{row}.json")
        write_json(config, c)
        log = ctx.path("logs", f"slice-{row}.log")
        rc = ctx.runner.run([ctx.bin("ptdp"), "slice", "--config", config, "--device", "cuda", "--stage", "heaviest",
                             "--iterations", "2", "--warmup", "1", "--out", out], log, room / len(SLICED_ROWS), ctx.env)
        ctx.runner.note(f"Table 1 {row}: exit {rc}: {ctx.last_line(log)[:200]}")
        outcomes.append(of_exit(rc) if rc or read_or_none(out) else FAILED)
    return combined(outcomes)


def ncu_path():
    found = shutil.which("ncu")
    if found:
        return found
    candidates = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu") + glob.glob("/usr/local/cuda/bin/ncu"))
    return candidates[-1] if candidates else None


def step_ncu(ctx, room):
    """Nsight Compute's kernel times of one layer's forward and backward at the headline's
    shapes: only the timed iterations (the NVTX range ptdp_timed), clocks left as they are."""
    ctx.need_gpu()
    ncu = ncu_path()
    if ctx.device != "cuda" or not ncu:
        raise StepSkipped("no Nsight Compute (ncu)" if ctx.device == "cuda" else "needs a GPU")
    b = ctx.micro_batch.get(("1.7b", "none"), 4)
    config = ctx.config("1.7b", b, "none")
    outcomes = []
    for direction in ("fwd", "bwd"):
        csv = ctx.path("ncu", f"layer-{direction}.csv")
        rc = ctx.runner.run([ncu, "--clock-control", "none", "--nvtx", "--nvtx-include", "ptdp_timed/",
                             "--metrics", "gpu__time_duration.sum", "--csv", "--log-file", csv, "--launch-count", "400",
                             ctx.bin("ptdp_bench_kernels"), "--device", "cuda", "--config", config,
                             steps.bench_filter(f"layer/{direction}/hidden"), "--benchmark_min_time=0.0001"],
                            ctx.path("logs", f"ncu-{direction}.log"), room / 2, ctx.env)
        kernels = kernel_times(csv)
        ctx.runner.note(f"layer {direction}: ncu exit {rc}, {len(kernels)} kernels, "
                        f"{sum(kernels.values()) * 1e3:.3f} ms in all" if kernels else f"layer {direction}: ncu exit {rc}")
        outcomes.append(of_exit(rc) if rc else OK if kernels else FAILED)
    return combined(outcomes)
