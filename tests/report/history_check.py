#!/usr/bin/python3
"""`ptdp history` draws the fixture folder tests/gate/history (tests/gate/README.md):
a PNG is written and not empty, and the commit with the planted slowdown is the one flagged,
in the printed lines and in the JSON.

Usage: /usr/bin/python3 tests/report/history_check.py --ptdp build/endtoend/ptdp
Exit status: 0 passed, 1 failed.
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "report"))
from ptdp_report.load import read_document  # noqa: E402

FIXTURE = HERE.parent / "gate" / "history"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SLOW_FILE = "3-slow.json"  # the planted 3x slowdown


def check(ptdp):
    with tempfile.TemporaryDirectory() as out:
        png, data = Path(out) / "history.png", Path(out) / "history.json"
        run = subprocess.run([ptdp, "history", str(FIXTURE), "--metric", "model_tflops_per_gpu",
                              "--out", str(png), "--json", str(data), "--python", sys.executable],
                             capture_output=True, text=True, check=False)
        problems = []
        if run.returncode != 0:
            problems.append(f"exit status {run.returncode}: {run.stderr}")
        if not png.is_file() or png.stat().st_size < 1000 or png.read_bytes()[:8] != PNG_SIGNATURE:
            problems.append(f"no PNG at {png}")
        flagged_lines = [line for line in run.stdout.splitlines() if "FLAGGED" in line]
        if len(flagged_lines) != 1 or SLOW_FILE not in flagged_lines[0]:
            problems.append(f"expected only {SLOW_FILE} flagged, printed:\n{run.stdout}")
        if data.is_file():
            history = read_document(data, "ptdp.history/1")
            flagged = [p["file"] for s in history["series"] for p in s["points"] if p["flagged"]]
            if flagged != [SLOW_FILE]:
                problems.append(f"JSON flags {flagged}")
        else:
            problems.append("no JSON written")
        return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ptdp", required=True)
    problems = check(parser.parse_args().ptdp)
    for p in problems:
        print(f"FAIL: {p}")
    print("history_check: " + ("failed" if problems else "passed"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
