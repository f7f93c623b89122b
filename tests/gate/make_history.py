#!/usr/bin/python3
"""Writes tests/gate/history/ from base.json and rerun.json (README.md beside this file):
four files as four CI runs of one configuration, the third a planted 3x slowdown.
software.commit is replaced by a name saying what each file is (they all come from one build).
"""
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
SLOWDOWN = 3.0


def slowed(result, factor):
    """The result as a run `factor` times slower would record it: every sample, the statistics, TFLOP/s."""
    r = json.loads(json.dumps(result))
    it = r["metrics"]["iteration_s"]
    it["samples"] = [s * factor for s in it["samples"]]
    for key in ("median", "min", "max", "mean"):
        it[key] *= factor
    r["metrics"]["model_tflops_per_gpu"] /= factor
    return r


def main():
    base = json.loads((HERE / "base.json").read_text(encoding="utf-8"))
    rerun = json.loads((HERE / "rerun.json").read_text(encoding="utf-8"))
    runs = [("1-base", base), ("2-rerun", rerun), ("3-slow", slowed(rerun, SLOWDOWN)), ("4-rerun-again", rerun)]
    out = HERE / "history"
    out.mkdir(exist_ok=True)
    for name, result in runs:
        result = json.loads(json.dumps(result))
        result["software"]["commit"] = name
        (out / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
