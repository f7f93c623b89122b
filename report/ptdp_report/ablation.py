"""The ablation section: `ptdp validate --ablate` (results/paper-ablation.json), one
row per modelled mechanism switched off, one column per experiment, each cell the
change of its mean |error| in points against the full model."""
from pathlib import Path

from .load import read_optional, require
from .tables import table

SCHEMA = "ptdp.ablation/1"
FIELDS = {"/full/*/mean_abs_error": "number", "/off": "array", "/off/*/mechanism": "string",
          "/off/*/experiments/*/change": "number"}


def ablation_section(results_dir):
    """Markdown lines for the ablation, or [] when the results have none."""
    path = Path(results_dir) / "paper-ablation.json"
    doc = read_optional(path, SCHEMA)
    if doc is None:
        return []
    require(doc, path, FIELDS)
    full = doc["full"]
    names = list(full)
    rows = [["full model: mean abs error"] + [f"{100 * full[n]['mean_abs_error']:.1f}%" for n in names]]
    for row in doc["off"]:
        exps = row["experiments"]
        rows.append([f"without {row['mechanism']}"] + [f"{100 * exps[n]['change']:+.1f}" for n in names])
    return ["## Ablation: each modelled mechanism off in turn", "",
            "Change of each experiment's mean absolute error against the paper, in points, with one "
            "mechanism of the cost model switched off (`ptdp validate --ablate`; docs/projection.md lists "
            "each mechanism and its source). Positive: the mechanism brings the projection closer to the paper.",
            ""] + table(["mechanism"] + names, rows) + [""]
