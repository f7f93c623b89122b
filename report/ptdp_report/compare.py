"""ptdp's values against the paper's: the signed error of a point and a sweep's summary.

The error is (value − paper)/paper, as docs/results-format.md defines it; it is recomputed
here from the two values so that the report never shows an error the numbers do not give.
"""
from .points import number


def point_error(point):
    """(value − paper)/paper, or None when either is missing or paper is 0."""
    value, paper = number(point.get("value")), number(point.get("paper"))
    if value is None or paper is None or paper == 0:
        return None
    return (value - paper) / paper


def error_summary(points):
    """(count, mean |error|, max |error|) over the points with both values; (0, None, None) if none."""
    errors = [abs(e) for e in map(point_error, points) if e is not None]
    if not errors:
        return 0, None, None
    return len(errors), sum(errors) / len(errors), max(errors)


def drawable(point):
    """Whether a figure shows the point: ok with a value, or does_not_fit."""
    status = point.get("status")
    if status == "does_not_fit":
        return True
    return status == "ok" and number(point.get("value")) is not None
