"""The modern validation section: `ptdp validate --set modern` (results/modern-validation.json,
ptdp.validation/1 with "set": "modern"). Published training runs from sources other than the
SC21 paper: per source its runs, mean and max |error| (a table and a bar figure against the
8% target), then every run with its published and projected values."""
from pathlib import Path

from .load import read_optional, require
from .tables import table

SCHEMA = "ptdp.validation/1"
FILE = "modern-validation.json"
FIGURE = "modern-validation.png"
TARGET = 0.08            # issue 19: mean |error| at most 8% per source
FIELDS = {**{f"/overall/{n}": "number" for n in ("points", "sources", "mean_abs_error", "max_abs_error")},
          "/experiments": "array", "/experiments/*/name": "string", "/experiments/*/metric": "string",
          "/experiments/*/mean_abs_error": "number", "/experiments/*/max_abs_error": "number",
          **{f"/experiments/*/points/*/{n}": "number" for n in ("paper", "projected", "error")},
          "/experiments/*/points/*/label": "string"}


def read_modern(results_dir):
    """The modern set's document under results_dir, or None when there is none (no file, or
    the paper set's validation under that name)."""
    path = Path(results_dir) / FILE
    doc = read_optional(path, SCHEMA)
    if doc is None or doc.get("set") != "modern":
        return None
    return require(doc, path, FIELDS)


def _source_rows(doc):
    rows = []
    for e in doc["experiments"]:
        src = e.get("source") or {}
        rows.append([e["name"], src.get("title", "?"), src.get("gpu", "?"), str(len(e["points"])),
                     e["metric"], f"{100 * e['mean_abs_error']:.1f}%", f"{100 * e['max_abs_error']:.1f}%",
                     "yes" if e["mean_abs_error"] <= TARGET else "no"])
    return rows


def _run_rows(doc):
    rows = []
    for e in doc["experiments"]:
        for p in e["points"]:
            fits = "" if p.get("fits", True) else " (does not fit in ptdp's memory model)"
            rows.append([e["name"], p["label"], f"{p['paper']:.4g}", f"{p['projected']:.4g}",
                         f"{100 * p['error']:+.1f}%{fits}"])
    return rows


def draw_modern(doc, out_dir):
    """Per source: mean and max |error| as bars, the 8% target as a line. Returns the PNG's name."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [e["name"].removeprefix("modern-") for e in doc["experiments"]]
    means = [100 * e["mean_abs_error"] for e in doc["experiments"]]
    maxes = [100 * e["max_abs_error"] for e in doc["experiments"]]
    at = range(len(names))
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    ax.bar([x - 0.2 for x in at], means, width=0.4, label="mean |error|")
    ax.bar([x + 0.2 for x in at], maxes, width=0.4, label="max |error|")
    ax.axhline(100 * TARGET, color="black", linestyle="--", linewidth=1, label="8% target (mean)")
    ax.set_xticks(list(at), names, rotation=15)
    ax.set_ylabel("|projected / published - 1|, %")
    ax.set_title("Modern validation set: error per source")
    ax.legend()
    fig.tight_layout()
    fig.savefig(Path(out_dir) / FIGURE)
    plt.close(fig)
    return FIGURE


def modern_section(results_dir, out_dir):
    """Markdown lines for the modern set (and its figure in out_dir), or [] when the results have none."""
    doc = read_modern(results_dir)
    if doc is None:
        return []
    o = doc["overall"]
    figure = draw_modern(doc, out_dir)
    lines = ["## Modern validation: published runs from other sources", "",
             f"`ptdp validate --set modern`: {o['points']} runs from {o['sources']} sources "
             f"(report/reference/modern-runs.json: each run's source, stated settings and the rules for "
             f"unstated choices), mean |error| {100 * o['mean_abs_error']:.1f}%, max "
             f"{100 * o['max_abs_error']:.1f}%. One machine profile per GPU kind, no per-run fitting; "
             f"docs/projection.md explains each source's gap.", "", f"![]({figure})", ""]
    lines += table(["source", "title", "GPU", "runs", "metric", "mean abs error", "max abs error", "mean ≤ 8%"],
                   _source_rows(doc)) + [""]
    lines += table(["source", "run", "published", "projected", "error"], _run_rows(doc)) + [""]
    if doc.get("h200"):
        lines += [f"_H200: {doc['h200']}_", ""]
    return lines
