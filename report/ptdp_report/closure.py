"""The closure section: scripts/closure.sh's results (results/closure/*.json,
ptdp.closure/1). Each point of the CPU sweeps measured on one machine beside its
projection with a calibration made on that machine in the same run."""
from pathlib import Path

from .load import read_document, require
from .tables import table

SCHEMA = "ptdp.closure/1"
ROW = {"sweep": "string", "label": "string", "ranks": "number", "measured_s": "number", "projected_s": "number",
       "error": "number"}
OPS = "/compute_per_micro_batch/directions/*/"
FIELDS = {**{f"/points/*/{name}": kind for name, kind in ROW.items()},
          **{OPS + name: "number" for name in ("measured_s", "sum_of_ops_s", "excess")},
          OPS + "parts/*/benchmark": "string", OPS + "parts/*/count": "number"}


def _read(path):
    """A closure file, its rows and (when it has them) its ops' directions checked."""
    doc = read_document(path, SCHEMA)
    ops = doc.get("compute_per_micro_batch")
    return require(doc, path, {k: v for k, v in FIELDS.items() if ops or not k.startswith(OPS)})


def _bound_cell(row):
    if row.get("oversubscribed"):
        return "oversubscribed: excepted"
    return "within" if row.get("within_bound") else "OUT"


def _provenance(doc):
    sw = doc.get("software") or {}
    parts = [f"commit {sw.get('commit', '?')}", sw.get("compiler"), sw.get("mpi"), sw.get("openblas"),
             doc.get("host"), f"{doc.get('cores', '?')} cores",
             f"load average {doc['load_average_at_end']:.2f} at the end" if "load_average_at_end" in doc else None]
    return ", ".join(p for p in parts if p)


def closure_section(results_dir):
    """Markdown lines for every closure file under results_dir/closure, or []."""
    lines = []
    for path in sorted((Path(results_dir) / "closure").glob("*.json")):
        doc = _read(path)
        rows = doc["points"]
        checked = [r for r in rows if not r.get("oversubscribed")]
        within = sum(1 for r in checked if r.get("within_bound"))
        bound = 100 * doc.get("bound", 0)
        lines += [f"## Closure on the machine that measured: {path.stem}", "",
                  f"Measured ({doc.get('measured', 'fastest iteration')}) against projected with a calibration "
                  f"made on the same machine in the same run (`scripts/closure.sh`); error = projected / "
                  f"measured − 1. {within} of {len(checked)} points within {bound:.0f}%; "
                  f"oversubscribed points (more ranks than cores) are shown and excepted. {_provenance(doc)}.", ""]
        lines += table(["sweep", "point", "ranks", "measured s", "projected s", "error", f"±{bound:.0f}%"],
                       [[r["sweep"], r["label"], r["ranks"], f"{r['measured_s']:.4f}", f"{r['projected_s']:.4f}",
                         f"{100 * r['error']:+.1f}%", _bound_cell(r)] for r in rows]) + [""]
        lines += _ops_lines(doc.get("compute_per_micro_batch"))
    return lines


def _ops_lines(ops):
    """The single-rank run's compute per micro-batch against its benchmarked ops (scripts/op_closure.py)."""
    if not ops:
        return []
    bound = 100 * ops.get("bound", 0)
    rows = []
    for direction, d in ops.get("directions", {}).items():
        parts = " + ".join(f"{p['count']}×{p['benchmark']}" if p["count"] > 1 else p["benchmark"] for p in d["parts"])
        within = "within" if abs(d["excess"]) * 100 <= bound else "OUT"
        rows.append([direction, f"{1e3 * d['measured_s']:.3f}", f"{1e3 * d['sum_of_ops_s']:.3f}",
                     f"{100 * d['excess']:+.1f}%", within, parts])
    return ["The single-rank run's compute per micro-batch (median of its trace) against the sum of its ops "
            "as `ptdp_bench_kernels` measures them at the same shapes (`scripts/op_closure.py`).", ""] + \
        table(["direction", "runtime ms", "sum of ops ms", "excess", f"±{bound:.0f}%", "ops"], rows) + [""]
