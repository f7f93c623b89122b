"""Figure 8 by the paper's eq. (1) (Section 3.4), from the single-GPU times of a figure7 or figure8 sweep.

T(b) = (B/b + p − 1)·t(b): the time of a batch of B sequences on a pipeline of p stages
with micro-batches of b, from t(b), the time of one micro-batch of b on one GPU.
"""
import re

from .load import Sweep
from .points import lookup, number, plan_field, result_metric, series_name, series_of

PIPELINE = 8                                     # p of the paper's Figure 8, (p,t) = (8,8)
GLOBAL_BATCHES = (128, 512)                      # B of its two curves
FIGURE7_REFERENCE = "figure7_single_gpu_microbatch"
FIGURE8_REFERENCE = "figure8_estimated_throughput_model"
METRIC = "normalised_throughput"
# eq. (1) with no-break spaces, so that a wrapped title keeps it on one line
FORMULA = "T(b)\u00a0=\u00a0(B/b\u00a0+\u00a0p\u00a0−\u00a01)·t(b)"


def eq1_normalised_throughput(times, global_batch, pipeline=PIPELINE):
    """Throughput by eq. (1) relative to b = 1, for each micro-batch size b in `times`.

    times: {b: t(b) seconds}. T(b) = (B/b + p − 1)·t(b) and throughput ∝ B/T(b),
    so the result is T(1)/T(b). Empty when t(1) is missing; b > B is left out.
    """
    if 1 not in times:
        return {}
    batch_time = {b: (global_batch / b + pipeline - 1) * t for b, t in times.items() if b <= global_batch}
    return {b: batch_time[1] / batch_time[b] for b in sorted(batch_time)}


def micro_batch_times(points):
    """{mode: {b: t(b)}} from the ok points whose global batch equals their micro-batch b."""
    times = {}
    for point in points:
        if point.get("status") != "ok":
            continue
        b, batch = plan_field(point, "micro_batch"), plan_field(point, "global_batch")
        t = result_metric(point, "iteration_s.median")
        if number(b) is None or b != batch or t is None:
            continue
        times.setdefault(point.get("mode"), {})[int(b)] = t
    return times


def is_figure7(sweep):
    return sweep.name == "figure7" or sweep.header.get("reference") == FIGURE7_REFERENCE


def is_figure8(sweep):
    return sweep.name == "figure8" or sweep.header.get("reference") == FIGURE8_REFERENCE


def batch_of_series(name):
    """B from a figure8 sweep's series name ("batch_size_128" -> 128), or None."""
    match = re.search(r"(\d+)\s*$", str(name))
    return int(match.group(1)) if match else None


def _time_groups(sweep):
    """[(B, {mode: {b: t(b)}})]: a figure8 sweep's series each name their B; figure7 serves both."""
    if not is_figure8(sweep):
        times = micro_batch_times(sweep.points)
        return [(batch, times) for batch in GLOBAL_BATCHES]
    groups = []
    for series in series_of(sweep.points):
        batch = batch_of_series(series)
        if batch is not None:
            groups.append((batch, micro_batch_times([p for p in sweep.points if series_name(p) == series])))
    return groups


def _paper_value(reference, global_batch, b):
    series = lookup(reference, f"experiments.{FIGURE8_REFERENCE}.series")
    return number(lookup(series, f"batch_size_{global_batch}.{b}")) if series else None


def _derived_points(groups, reference):
    points = []
    for global_batch, times in groups:
        for mode, by_b in times.items():
            for b, value in eq1_normalised_throughput(by_b, global_batch).items():
                points.append({"key": f"figure8#{global_batch}:{b}:{mode}", "mode": mode,
                               "status": "ok", "series": f"batch {global_batch}", "label": str(b),
                               "metric": METRIC, "value": value, "result": None,
                               "paper": _paper_value(reference, global_batch, b), "batch": global_batch})
    points.sort(key=lambda p: (p["batch"], int(p["label"]), str(p["mode"])))
    for i, p in enumerate(points):
        p["index"] = i
    return points


def _header(source):
    if is_figure8(source):
        return dict(source.header, metric=METRIC)
    return {"name": "figure8", "reference": FIGURE8_REFERENCE, "metric": METRIC,
            "machine": source.header.get("machine"),
            "reproduces": (f"Figure 8: throughput estimated by eq. (1), {FORMULA} with "
                           f"p\u00a0=\u00a0{PIPELINE}, from {source.name}'s times t(b) of one "
                           "micro-batch, normalised to b\u00a0=\u00a01")}


def derive_figure8(source, reference):
    """The Figure 8 sweep computed from a figure7 or figure8 sweep's t(b), or None without t(1)."""
    points = _derived_points(_time_groups(source), reference)
    if not points:
        return None
    return Sweep("figure8", _header(source), points, list(source.sources), derived_from=source.name)


def with_figure8(sweeps, reference, warn):
    """The sweeps with Figure 8 as eq. (1) makes it: from a figure8 sweep's own times (replacing
    its raw results), else from figure7's. Unchanged when neither gives t(1)."""
    figure8 = next(filter(is_figure8, sweeps), None)
    source = figure8 or next(filter(is_figure7, sweeps), None)
    if source is None:
        return list(sweeps)
    derived = derive_figure8(source, reference)
    if derived is None:
        warn(f"cannot derive figure8 from {source.name}: no point with global batch = micro-batch = 1")
        return list(sweeps)
    return [s for s in sweeps if s is not figure8] + [derived]
