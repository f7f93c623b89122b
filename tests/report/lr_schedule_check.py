#!/usr/bin/python3
"""`ptdp train` with a warmup + cosine schedule over 100 iterations records, in
metrics.lr, the learning rates of the same schedule computed independently:
by PyTorch (an SGD over one parameter, stepped by a LambdaLR with the
schedule's factor) where torch can be imported, else by the formulas written
out here. Agreement within 1e-5 of lr at every iteration; the source used is printed.

Usage: python3 tests/report/lr_schedule_check.py --ptdp build/endtoend/ptdp
Exit status: 0 passed, 1 failed.
"""
import argparse
import importlib.util
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

ITERATIONS = 100
LR, MIN_LR, WARMUP, DECAY = 0.003, 0.0003, 10, 100
TOLERANCE = 1e-5 * LR  # relative to the peak rate: 1e-5 of it, far below one iteration's change
OPTIMIZER = {"lr": LR, "min_lr": MIN_LR, "lr_warmup_iters": WARMUP, "lr_decay_style": "cosine",
             "lr_decay_iters": DECAY}
CONFIG = {"model": {"layers": 1, "hidden": 32, "heads": 2, "seq_len": 8, "vocab": 64},
          "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 1, "global_batch": 1, "precision": "fp32"},
          "optimizer": OPTIMIZER, "machine": "cpu-host"}


def factor(i):
    """The schedule's learning rate at iteration i over LR: warmup from 0, then cosine to MIN_LR."""
    if i <= WARMUP:
        return i / WARMUP
    if i > DECAY:
        return MIN_LR / LR
    r = (i - WARMUP) / (DECAY - WARMUP)
    return (MIN_LR + 0.5 * (1 + math.cos(math.pi * r)) * (LR - MIN_LR)) / LR


def torch_rates():
    import torch  # pylint: disable=import-outside-toplevel
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=LR)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    rates = []
    for _ in range(ITERATIONS):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return rates


def expected_rates():
    if importlib.util.find_spec("torch") is not None:
        return "PyTorch LambdaLR", torch_rates()
    return "the formulas in this check (torch is not installed)", [LR * factor(i) for i in range(ITERATIONS)]


def measured_rates(ptdp):
    with tempfile.TemporaryDirectory() as out:
        config, result = Path(out) / "c.json", Path(out) / "r.json"
        config.write_text(json.dumps(CONFIG))
        run = subprocess.run([ptdp, "train", "--config", str(config), "--iterations", str(ITERATIONS),
                              "--out", str(result)], capture_output=True, text=True, check=False)
        if run.returncode != 0:
            sys.exit(f"FAIL: ptdp train exited {run.returncode}: {run.stderr.strip()}")
        doc = json.loads(result.read_text())
    if doc["optimizer"]["lr_decay_style"] != "cosine":
        sys.exit("FAIL: the result's optimizer block does not record the schedule")
    if len(doc["metrics"]["lr"]) != len(doc["metrics"]["loss"]):
        sys.exit("FAIL: metrics.lr is not as long as metrics.loss")
    return doc["metrics"]["lr"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ptdp", required=True)
    args = parser.parse_args()
    source, expected = expected_rates()
    got = measured_rates(args.ptdp)
    worst = max(range(ITERATIONS), key=lambda i: abs(got[i] - expected[i]))
    error = abs(got[worst] - expected[worst])
    print(f"lr schedule against {source}: worst |ptdp - expected| = {error:.3g} at iteration {worst}")
    if len(got) != ITERATIONS or error > TOLERANCE:
        print(f"FAIL: iteration {worst}: ptdp {got[worst]!r}, expected {expected[worst]!r}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
