#!/usr/bin/python3
"""Draws `ptdp history`'s JSON (ptdp.history/1): the metric over commits, one line per
configuration, the commits the gate flagged marked. ptdp decides what is flagged; this only draws.

Usage: python3 report/plot_history.py HISTORY.json OUT.png
Exit status: 0 drawn, 2 input refused (unreadable, not ptdp.history/1, or a field missing).
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptdp_report.load import Refused, read_document, require  # noqa: E402

SCHEMA = "ptdp.history/1"
FIELDS = {"/metric": "string", "/flagged": "number", "/threshold_pct": "number", "/alpha": "number",
          "/series": "array", "/series/*/label": "string", "/series/*/mode": "string",
          "/series/*/points/*/file": "string", "/series/*/points/*/commit": "string",
          "/series/*/points/*/value": "number or null", "/series/*/points/*/flagged": "bool"}
FIGSIZE = (8.0, 4.2)   # inches
DPI = 110
FLAG_COLOR = "tab:red"
COMMIT_CHARS = 8       # of a commit on the x axis


def file_order(history):
    """Every file once, in the order the points give (ptdp sorted them), with its commit."""
    seen = {}
    for series in history["series"]:
        for point in series["points"]:
            seen.setdefault(point["file"], point["commit"])
    return list(seen.items())


def draw(history, out):
    files = file_order(history)
    x_of = {name: i for i, (name, _) in enumerate(files)}
    fig, ax = plt.subplots(figsize=FIGSIZE)
    flagged_label = "flagged by the gate"
    for series in history["series"]:
        points = [p for p in series["points"] if p["value"] is not None]
        xs = [x_of[p["file"]] for p in points]
        ax.plot(xs, [p["value"] for p in points], marker="o", label=f'{series["label"]} ({series["mode"]})')
        bad = [p for p in points if p["flagged"]]
        ax.scatter([x_of[p["file"]] for p in bad], [p["value"] for p in bad], s=160, facecolors="none",
                   edgecolors=FLAG_COLOR, linewidths=2, zorder=3, label=flagged_label)
        if bad:
            flagged_label = None  # one legend entry
    ax.set_xticks(range(len(files)))
    ax.set_xticklabels([commit[:COMMIT_CHARS] for _, commit in files], rotation=45, ha="right", fontsize=8)
    ax.set_xlabel("commit (files in name order)")
    ax.set_ylabel(history["metric"])
    ax.set_title(f'{history["metric"]} over commits: {history["flagged"]} flagged '
                 f'(threshold {history["threshold_pct"]:g}%, alpha {history["alpha"]:g})', fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out, dpi=DPI, format="png")  # `out` may be a temporary name without .png
    plt.close(fig)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        history = require(read_document(argv[0], SCHEMA), argv[0], FIELDS)
    except Refused as e:
        print(f"error: refused: {e}", file=sys.stderr)
        return 2
    draw(history, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
