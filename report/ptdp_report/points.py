"""A sweep point's fields as the report reads them (docs/results-format.md): numbers by metric
path, plan fields, and its label and series, taken in first-seen order across points.
Lenient by design: a missing or non-numeric field is None or "", shown as a dash.
"""
from .load import Refused, field, number


def lookup(obj, dotted):
    """obj["a"]["b"] for "a.b"; None when a step is missing."""
    try:
        return field(obj, "/" + dotted.replace(".", "/"), "a point")
    except Refused:
        return None


def result_metric(point, dotted):
    """A number from the point's result.metrics ("iteration_s.median", "bubble.measured")."""
    return number(lookup(point.get("result"), "metrics." + dotted))


def plan_field(point, name):
    """A plan field of the point: from its result's resolved plan, else its overrides."""
    value = lookup(point.get("result"), "plan." + name)
    if value is None and isinstance(point.get("overrides"), dict):
        value = point["overrides"].get("plan." + name)
    return value


def ordered_unique(values):
    """values without repeats, in first-seen order."""
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def label_of(point):
    """The point's x position or category, as text ("" when missing)."""
    return "" if point.get("label") is None else str(point["label"])


def series_name(point):
    """The curve the point belongs to, as text ("" when missing)."""
    return "" if point.get("series") is None else str(point["series"])


def labels_of(points):
    return ordered_unique(map(label_of, points))


def series_of(points):
    return ordered_unique(map(series_name, points))
