"""Kernel times from Nsight Compute's CSV (ncu --csv --metrics gpu__time_duration.sum).
Standard library only."""
import csv


def kernel_times(csv_path):
    """{kernel name: seconds summed} from ncu's CSV (gpu__time_duration.sum, in its unit)."""
    scale = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}
    out = {}
    try:
        with open(csv_path, newline="") as f:
            rows = [r for r in csv.reader(l for l in f if l.startswith('"'))]
    except OSError:
        return out
    if not rows:
        return out
    head = rows[0]
    try:
        name_at, unit_at, value_at, metric_at = (head.index(k) for k in ("Kernel Name", "Metric Unit", "Metric Value",
                                                                          "Metric Name"))
    except ValueError:
        return out
    for r in rows[1:]:
        if len(r) > value_at and r[metric_at] == "gpu__time_duration.sum":
            try:
                seconds = float(r[value_at].replace(",", "")) * scale.get(r[unit_at], 1e-9)
            except ValueError:
                continue
            out[r[name_at]] = out.get(r[name_at], 0.0) + seconds
    return out
