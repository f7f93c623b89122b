"""The memory validation section: `ptdp validate --set memory` (results/memory-validation.json,
ptdp.validation/1 with "set": "memory"). Published per-GPU memory figures against ptdp's memory
model, like with like (each figure's scope): per source its figures and mean and max |error|
against the issue's target (mean 5%, none over 10%), then every figure with its source's words,
the mechanism behind a miss and any mechanism still pending in the model."""
from pathlib import Path

from .load import read_optional, require
from .tables import table

SCHEMA = "ptdp.validation/1"
FILE = "memory-validation.json"
MEAN_TARGET, MAX_TARGET = 0.05, 0.10   # issue 33: mean |error| at most 5%, none over 10%
FIELDS = {**{f"/overall/{n}": "number" for n in ("points", "mean_abs_error", "max_abs_error")},
          **{f"/overall_without_pending/{n}": "number" for n in ("points", "mean_abs_error", "max_abs_error")},
          "/experiments": "array", "/experiments/*/name": "string",
          "/experiments/*/mean_abs_error": "number", "/experiments/*/max_abs_error": "number",
          **{f"/experiments/*/points/*/{n}": "number" for n in ("published", "modelled", "error")},
          "/experiments/*/points/*/run": "string", "/experiments/*/points/*/scope": "string"}


def read_memory(results_dir):
    """The memory set's document under results_dir, or None when there is none."""
    path = Path(results_dir) / FILE
    doc = read_optional(path, SCHEMA)
    if doc is None or doc.get("set") != "memory":
        return None
    return require(doc, path, FIELDS)


def _within(mean, most):
    return "yes" if mean <= MEAN_TARGET and most <= MAX_TARGET else "no"


def _source_rows(doc):
    return [[e["name"], (e.get("source") or {}).get("title", "?"), str(len(e["points"])),
             f"{100 * e['mean_abs_error']:.1f}%", f"{100 * e['max_abs_error']:.1f}%",
             _within(e["mean_abs_error"], e["max_abs_error"])] for e in doc["experiments"]]


def _why(p):
    if p.get("pending"):
        return f"pending: {p['pending']}"
    return p.get("mechanism", "")


def _point_rows(doc):
    rows = []
    for e in doc["experiments"]:
        for p in e["points"]:
            rows.append([e["name"], p["run"], p["scope"],
                         p.get("published_as", ""), f"{p['published']:.4g}", f"{p['modelled']:.4g}",
                         f"{100 * p['error']:+.1f}%", _why(p)])
    return rows


def memory_section(results_dir):
    """Markdown lines for the memory set, or [] when the results have none."""
    doc = read_memory(results_dir)
    if doc is None:
        return []
    o, m = doc["overall"], doc["overall_without_pending"]
    lines = ["## Memory validation: the memory model against published figures", "",
             f"`ptdp validate --set memory`: {o['points']} published per-GPU figures "
             f"(report/reference/memory-runs.json: each figure's source, what it covers, and why it differs), "
             f"each against the same part of ptdp's memory model. Mean |error| {100 * o['mean_abs_error']:.1f}%, "
             f"max {100 * o['max_abs_error']:.1f}%; without the figures whose mechanism the model does not have yet: "
             f"{m['points']} figures, mean {100 * m['mean_abs_error']:.1f}%, max {100 * m['max_abs_error']:.1f}% "
             f"(target: mean ≤ {100 * MEAN_TARGET:.0f}%, none over {100 * MAX_TARGET:.0f}%).", ""]
    lines += table(["source", "title", "figures", "mean abs error", "max abs error", "within target"],
                   _source_rows(doc)) + [""]
    lines += table(["source", "run", "scope", "as published", "published", "modelled", "error", "why it differs"],
                   _point_rows(doc)) + [""]
    for n in doc.get("not_comparable", []):
        lines += [f"_Not comparable: {n.get('source', '?')}, {n.get('run', '?')}: {n.get('why', '')}_", ""]
    return lines
