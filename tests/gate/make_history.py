#!/usr/bin/python3
"""Writes tests/gate/history/ from base.json and rerun.json (README.md beside this file):
four files as four CI runs of one configuration, the third a planted 3x slowdown.
software.commit is replaced by a name saying what each file is (they all come from one build).
"""
import copy
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "report"))
from ptdp_report.load import read_json  # noqa: E402

HERE = Path(__file__).resolve().parent
SLOWDOWN = 3.0


def slowed(result, factor):
    """The result as a run `factor` times slower would record it: every sample, the statistics, TFLOP/s."""
    r = copy.deepcopy(result)
    it = r["metrics"]["iteration_s"]
    it["samples"] = [s * factor for s in it["samples"]]
    for key in ("median", "min", "max", "mean"):
        it[key] *= factor
    r["metrics"]["model_tflops_per_gpu"] /= factor
    return r


def main():
    base = read_json(HERE / "base.json")
    rerun = read_json(HERE / "rerun.json")
    runs = [("1-base", base), ("2-rerun", rerun), ("3-slow", slowed(rerun, SLOWDOWN)), ("4-rerun-again", rerun)]
    out = HERE / "history"
    out.mkdir(exist_ok=True)
    for name, result in runs:
        result = copy.deepcopy(result)
        result["software"]["commit"] = name
        (out / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
