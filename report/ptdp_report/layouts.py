"""How each experiment is drawn, as the paper draws it: chart kind and axis labels with units.

A sweep is matched by its name, else by its "reference" (the experiment's key in
report/reference/megatron-sc21.json); anything else gets grouped bars.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Layout:
    kind: str      # "lines" (one line per series) or "bars" (one bar per series in each group)
    xlabel: str    # the x axis: what the point labels are


LAYOUTS = {
    "table1": Layout("bars", "Model size (parameters)"),
    "table2": Layout("lines", "Data-parallel size d (GPUs = t·p·d)"),
    "figure6": Layout("lines", "Data-parallel size d"),
    "figure7": Layout("lines", "Micro-batch size b"),
    "figure8": Layout("lines", "Micro-batch size b"),
    "figure11": Layout("lines", "Pipeline-parallel size p"),
    "figure12": Layout("lines", "Global batch size (sequences)"),
    "figure13": Layout("bars", "(Pipeline-parallel size p, tensor-parallel size t)"),
    "figure14": Layout("bars", "(Pipeline-parallel size p, data-parallel size d)"),
    "figure15": Layout("bars", "(Tensor-parallel size t, data-parallel size d)"),
    "figure16": Layout("lines", "Micro-batch size b"),
    "figure17": Layout("lines", "Global batch size (sequences)"),
    "figure18": Layout("lines", "Global batch size (sequences)"),
    "fused_operators": Layout("bars", "Model"),
}
GENERIC = Layout("bars", "Configuration")

# The report's order of experiments; others follow by name.
ORDER = ("table1", "table2", "figure6", "figure7", "figure8", "figure11", "figure12", "figure13",
         "figure14", "figure15", "figure16", "figure17", "figure18", "fused_operators")

METRIC_LABELS = {
    "model_tflops_per_gpu": "Achieved TFLOP/s per GPU",
    "hardware_tflops_per_gpu": "Hardware TFLOP/s per GPU",
    "aggregate_pflops": "Aggregate PFLOP/s",
    "percent_of_peak": "Percent of peak (%)",
    "sequences_per_s": "Throughput (sequences/s)",
    "tokens_per_s": "Throughput (tokens/s)",
    "iteration_s.median": "Iteration time, median (s)",
    "bubble.analytical": "Pipeline bubble fraction (analytical)",
    "bubble.simulated": "Pipeline bubble fraction (simulated)",
    "bubble.measured": "Pipeline bubble fraction (measured)",
    "normalised_throughput": "Normalised throughput (b = 1 is 1.0)",
}


def experiment_key(sweep):
    """The LAYOUTS key of a sweep, or None."""
    if sweep.name in LAYOUTS:
        return sweep.name
    reference = str(sweep.header.get("reference") or "")
    for key in LAYOUTS:
        if reference == key or reference.startswith(key + "_"):
            return key
    return None


def layout_for(sweep):
    return LAYOUTS.get(experiment_key(sweep), GENERIC)


def x_label(sweep):
    """The layout's x label; for other sweeps the override the labels spell out, if one does."""
    layout = layout_for(sweep)
    if layout is not GENERIC:
        return layout.xlabel
    points = [p for p in sweep.points if isinstance(p.get("overrides"), dict) and p.get("label") is not None]
    keys = {k for p in points for k in p["overrides"]}
    for key in sorted(keys):
        if points and all(str(p["overrides"].get(key)) == str(p["label"]) for p in points):
            return key[len("tag."):] if key.startswith("tag.") else key
    return GENERIC.xlabel


def y_label(metric):
    return METRIC_LABELS.get(metric, metric or "value")


def report_order(sweep):
    """Sort key: the paper's experiments in ORDER, then the rest by name."""
    key = experiment_key(sweep)
    return (ORDER.index(key) if key in ORDER else len(ORDER), sweep.name)
