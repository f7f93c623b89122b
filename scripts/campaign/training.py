"""Training runs of the GPU campaign: ptdp or the PyTorch baseline on one
model and recompute mode, from the largest micro-batch down until one runs.
Each attempt is a line of attempts.tsv (system, model, recompute, micro-batch,
outcome, exit status, reason). ptdp's out-of-memory is its exit status 4 and the
baseline's 3; ptdp's memory model refuses a plan that cannot fit with exit 2
before allocating. Standard library only.
"""
import gzip
import os
import shutil
import time

from campaign.outcome import FAILED, OK, OOM, REFUSED, TIMEOUT, of_exit
from ptdp_report.load import read_or_none

OOM_EXIT = {"ptdp": 4, "pytorch": 3}


def outcome(system, rc, out):
    """An attempt's outcome: its exit status's, and exit 0 must leave a readable result."""
    if rc == 0 and not read_or_none(out):
        return FAILED
    return of_exit(rc, OOM_EXIT[system])


def gzip_file(path):
    """Replaces path by path.gz (traces are large and compress tenfold); returns the new path."""
    with open(path, "rb") as src, gzip.open(path + ".gz", "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst)
    os.unlink(path)
    return path + ".gz"


def command(ctx, system, config, out, iterations, warmup, trace):
    if system == "ptdp":
        cmd = [ctx.bin("ptdp"), "train", "--config", config, "--device", ctx.device, "--iterations",
               str(iterations), "--warmup", str(warmup), "--out", out]
        return cmd + (["--trace", trace] if trace else []), ctx.env
    script = os.path.join(ctx.root, "endtoend", "baselines", "pytorch_gpt.py")
    return [ctx.python, script, "--config", config, "--device", ctx.device, "--iterations", str(iterations),
            "--warmup", str(warmup), "--out", out], ctx.torch_env


def train(ctx, system, model, recompute, cap, folder, first=None, iterations=6, warmup=2, traced=False):
    """Trains SYSTEM on MODEL with RECOMPUTE from the largest micro-batch down (from FIRST
    when given: the batch the other system settled on). Returns (result path, micro-batch,
    ok) of the first that ran, or (None, None, the last attempt's outcome)."""
    sizes = list(ctx.micro_batches())
    if first:
        sizes = [first] + [b for b in sizes if b < first]
    deadline = time.monotonic() + cap
    status = FAILED
    for b in sizes:
        left = deadline - time.monotonic()
        if left < 15:
            ctx.runner.note(f"{system} {model} {recompute}: out of time before micro-batch {b}")
            return None, None, TIMEOUT
        config = ctx.config(model, b, recompute)
        name = f"{system}-{model}-{recompute}-b{b}"
        out = ctx.path(folder, name + ".json")
        trace = ctx.path(folder, name + ".trace.json") if traced and system == "ptdp" else None
        log = ctx.path("logs", name + ".log")
        cmd, env = command(ctx, system, config, out, iterations, warmup, trace)
        ctx.runner.say(f"{system} {model} recompute={recompute} micro-batch={b}")
        rc = ctx.runner.run(cmd, log, left, env)
        status = outcome(system, rc, out)
        reason = "" if status == OK else (ctx.first_line(log, "memory") if status == REFUSED else "") \
            or ctx.last_line(log)
        with open(ctx.path("attempts.tsv"), "a") as f:
            f.write("\t".join([system, model, recompute, str(b), status, str(rc), " ".join(reason.split())]) + "\n")
        if status == OK:
            if trace and os.path.isfile(trace):
                gzip_file(trace)
            said = ctx.first_line(log, "median") or ctx.last_line(log)
            ctx.runner.note(f"{system} {model} {recompute}: micro-batch {b} ran ({said[:200]})")
            return out, b, OK
        ctx.runner.note(f"{system} {model} {recompute} micro-batch {b}: {status} (exit {rc}): {reason[:200]}")
        if status not in (OOM, REFUSED):
            return None, None, status
    return None, None, status
