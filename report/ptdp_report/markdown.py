"""report.md: provenance, an overview of errors, and per experiment its figure and tables.

Tables: one row per point (ptdp value, paper value, signed error, status), then where the
points carry results, their pipeline bubble and memory (model total against measured peak).
"""
from pathlib import Path

from .ablation import ablation_section
from .closure import closure_section
from .memory import memory_section
from .modern import modern_section
from .compare import error_summary, point_error
from .layouts import y_label
from .points import label_of, lookup, number, result_metric, series_name
from .tables import cell, table

TITLE = "ptdp: reproducing Narayanan et al., SC'21 (Megatron-LM)"
DASH = "—"
GIB = 2 ** 30
BUBBLES = ("measured", "simulated", "analytical")   # result.metrics.bubble, in table order
REASON_CHARS = 100            # longer reasons are cut in the table


def fmt_value(x):
    x = number(x)
    if x is None:
        return DASH
    size = abs(x)
    if size >= 1000:
        return f"{x:,.0f}"
    if size < 0.1:
        return f"{x:.3g}"
    return f"{x:.1f}" if size >= 10 else f"{x:.2f}" if size >= 1 else f"{x:.3f}"


def fmt_error(e):
    return DASH if e is None else f"{e * 100:+.1f}%"


def fmt_percent(e):
    return DASH if e is None else f"{e * 100:.1f}%"


def fmt_fraction(x):
    return DASH if x is None else f"{x:.3f}"


def fmt_gib(n):
    if n is None:
        return DASH
    gib = n / GIB
    return f"{gib:.1f}" if gib >= 1 else f"{gib:.3g}"


def _status(point):
    status = str(point.get("status", DASH))
    reason = point.get("reason")
    if status != "ok" and reason:
        reason = str(reason)
        cut = reason[:REASON_CHARS] + ("…" if len(reason) > REASON_CHARS else "")
        status += f": {cut}"
    return status


def _provenance(sweeps, results_dir):
    sources = {}
    for sweep in sweeps:
        for s in sweep.sources:
            sources.setdefault(s.path, s)
    lines = [f"Built from {len(sources)} results file(s) under `{results_dir}`:", ""]
    for s in sources.values():
        commit = f"commit `{s.commit[:12]}`" if s.commit else "commit unknown"
        lines.append(f"- `{s.path}` ({commit}, updated {s.updated or 'unknown'})")
    lines += ["", "Projected numbers are projections by ptdp's simulator (`ptdp project`), not "
              "measurements; measured numbers are measurements (`ptdp train`). The mode column "
              "says which each point is. Errors are (ptdp − paper)/paper."]
    return lines


def _overview(sweeps):
    rows = []
    for sweep in sweeps:
        count, mean, worst = error_summary(sweep.points)
        rows.append([f"[{sweep.name}](#{sweep.name})", len(sweep.points), count,
                     fmt_percent(mean), fmt_percent(worst)])
    header = ["experiment", "points", "with paper value", "mean \\|error\\|", "max \\|error\\|"]
    return ["## Overview", ""] + table(header, rows)


def _identity(point):
    """The series, label and mode cells of a point."""
    return [series_name(point) or DASH, label_of(point) or DASH, point.get("mode") or DASH]


def _points_table(sweep):
    with_acceptance = any(p.get("acceptance") is not None for p in sweep.points)
    header = ["series", "label", "mode", "ptdp value", "paper value", "error", "status"]
    rows = []
    for p in sweep.points:
        row = _identity(p) + [fmt_value(p.get("value")), fmt_value(p.get("paper")),
                              fmt_error(point_error(p)), _status(p)]
        rows.append(row + ([p.get("acceptance") or DASH] if with_acceptance else []))
    return table(header + (["acceptance"] if with_acceptance else []), rows)


def _summary(sweep):
    count, mean, worst = error_summary(sweep.points)
    if not count:
        return "No point has both a ptdp value and a paper value."
    return (f"Mean |error| {fmt_percent(mean)}, max |error| {fmt_percent(worst)} "
            f"over {count} point(s) with both values.")


def _has_details(point):
    metrics = lookup(point.get("result"), "metrics")
    return isinstance(metrics, dict) and ("bubble" in metrics or "memory_bytes" in metrics)


def _details_table(sweep):
    points = [p for p in sweep.points if _has_details(p)]
    if not points:
        return []
    header = ["series", "label", "mode", "bubble measured", "bubble simulated", "bubble analytical",
              "memory model total (GiB)", "memory measured peak (GiB)"]
    rows = [_identity(p) + [fmt_fraction(result_metric(p, f"bubble.{kind}")) for kind in BUBBLES]
            + [fmt_gib(result_metric(p, "memory_bytes.model.total")),
               fmt_gib(result_metric(p, "memory_bytes.peak_measured"))] for p in points]
    return ["Pipeline bubble and memory, from the points' results:", ""] + table(header, rows)


def _about(sweep):
    modes = {}
    for p in sweep.points:
        modes[str(p.get("mode"))] = modes.get(str(p.get("mode")), 0) + 1
    counts = ", ".join(f"{n} {mode}" for mode, n in modes.items()) or "none"
    metric = sweep.metric
    line = f"Machine: {sweep.header.get('machine') or DASH}. Points: {counts}. "
    line += f"Metric: `{metric}` ({y_label(metric)})." if metric else "Metric: —."
    if sweep.derived_from:
        line += f" Values: eq. (1) applied to the times t(b) in {sweep.derived_from}'s results."
    return line


def _section(sweep):
    lines = [f"## {sweep.name}", "", sweep.reproduces, "", _about(sweep), ""]
    if sweep.header.get("note"):
        lines += [f"_{cell(sweep.header['note'])}_", ""]
    lines += [f"![]({sweep.slug}.png)", ""] + _points_table(sweep) + ["", _summary(sweep), ""]
    details = _details_table(sweep)
    return lines + (details + [""] if details else [])


def write_report(sweeps, out_dir, results_dir):
    """Writes out_dir/report.md for the sweeps (in the order given) and returns its path."""
    lines = [f"# {TITLE}", ""] + _provenance(sweeps, results_dir) + [""]
    lines += _overview(sweeps) + [""]
    for sweep in sweeps:
        lines += _section(sweep)
    lines += ablation_section(results_dir)
    lines += modern_section(results_dir, out_dir)
    lines += memory_section(results_dir)
    lines += closure_section(results_dir)
    path = Path(out_dir) / "report.md"
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return path
