"""The per-op part of endtoend/cpu_vs_pytorch.py: ptdp's kernel benchmark output
(ptdp_bench_kernels --benchmark_format=json) read into the ops a micro-batch runs, each
with its sizes, how often it runs and ptdp's µs per call; PyTorch's times of the same ops
(endtoend/baselines/torch_ops.py) added up beside them per op family.

A family's time is Σ occurrences × µs per call over its ops, per micro-batch of the
config (AdamW: one step over one layer's 12h² parameters). A fused op of ptdp's
(bias+GeLU GEMM) counts as its GEMM and its GeLU, timed alone, since PyTorch eager
runs them apart. The logits GEMMs are inside the head (cross entropy/logits).
"""
import statistics

# Families in the order the table prints them; the kind of each op they hold (the op kinds
# of core/layer_ops/op_kind.h, plus the head's and the optimizer's).
FAMILIES = {
    "gemm": ("linear_forward", "linear_data_grad", "linear_weight_grad", "bias_backward"),
    "attention": ("attention_forward", "attention_backward"),
    "layernorm": ("layernorm_forward", "layernorm_backward", "bias_residual_layernorm"),
    "gelu": ("gelu_forward", "gelu_backward"),
    "add/residual": ("bias_residual_add", "add"),
    "adamw": ("adamw",),
    "cross entropy/logits": ("head_forward", "head_backward"),
    "embedding": ("embedding_forward", "embedding_backward"),
}
FAMILY_OF = {kind: family for family, kinds in FAMILIES.items() for kind in kinds}
# A fused kind's GEMM and element-wise work (kOpKindTraits' gemm_part, elementwise_part).
FUSED_PARTS = {"linear_gelu_forward": ("linear_forward", "gelu_forward"),
               "linear_gelu_backward": ("linear_data_grad", "gelu_backward")}
# Benchmarks named by their part rather than labelled with a kind.
NAMED_KINDS = {"adamw/step": "adamw", "head/fwd": "head_forward", "head/bwd": "head_backward"}
COUNTERS = ("op_forward", "op_backward", "part_forward", "part_backward")
TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
# The ptdp benchmarks the comparison needs: a family/role name and its sizes, no variant tag
# ("/unfused_ops"), no whole layer.
BENCHMARK_FILTER = "^(gemm|bias_gelu|gelu|bias|layernorm|residual_layernorm|residual|add|attention|embedding|head" \
                   "|adamw)/[a-z0-9_]+/[A-Za-z_]+:"


def parse_name(name):
    """(base, sizes) of a benchmark name: "gemm/q_fwd/m:256/n:256/k:256/manual_time" ->
    ("gemm/q_fwd", {"m": 256, "n": 256, "k": 256}); a variant tag stays in base."""
    base, sizes = [], {}
    for part in name.split("/"):
        key, colon, value = part.partition(":")
        if colon:
            sizes[key] = int(value)
        elif not sizes and part != "manual_time":
            base.append(part)
    return "/".join(base), sizes


def kind_of(base, label):
    if base in NAMED_KINDS:
        return NAMED_KINDS[base]
    return label if label in FAMILY_OF or label in FUSED_PARTS else None


def ptdp_rows(doc):
    """{base: {"kind", "sizes", "us", "count", "samples"}} of a benchmark document's timed
    runs (iterations, not aggregates), their µs per call the median over repetitions."""
    rows = {}
    for run in doc["benchmarks"]:
        if run.get("run_type", "iteration") != "iteration" or run.get("error_occurred"):
            continue
        base, sizes = parse_name(run["name"])
        kind = kind_of(base, run.get("label"))
        if kind is None or base.startswith("gemm/logits_"):
            continue
        row = rows.setdefault(base, {"kind": kind, "sizes": sizes, "samples": [],
                                     "count": sum(float(run.get(c, 0)) for c in COUNTERS)})
        row["samples"].append(float(run["real_time"]) * TO_US[run.get("time_unit", "ns")])
    for row in rows.values():
        row["us"] = statistics.median(row["samples"])
        if row["kind"] == "adamw":
            row["count"] = 1.0
    return rows


def _part_of(rows, kind, sizes):
    """The base of the row of `kind` at `sizes` (a fused op's part), or None."""
    for base, row in rows.items():
        if row["kind"] == kind and all(row["sizes"].get(k) == v for k, v in sizes.items()):
            return base
    return None


def split_fused(rows):
    """Each fused op's occurrences given to its GEMM and its element-wise part; the fused rows
    dropped. Returns the fused ops whose parts were not benchmarked."""
    missing = []
    for base, row in list(rows.items()):
        if row["kind"] not in FUSED_PARTS:
            continue
        del rows[base]
        gemm_kind, elementwise_kind = FUSED_PARTS[row["kind"]]
        z = row["sizes"]
        parts = (_part_of(rows, gemm_kind, {"m": z["m"], "n": z["n"], "k": z["k"]}),
                 _part_of(rows, elementwise_kind, {"rows": z["m"], "cols": z["n"]}))
        if None in parts:
            missing.append(base)
            continue
        for part in parts:
            rows[part]["count"] += row["count"]
    return missing


def op_items(doc, vocab):
    """The ops a micro-batch runs, as a list of {"key", "kind", "family", "sizes", "count",
    "ptdp_us", "ptdp_samples"}, and the fused ops that could not be split."""
    rows = ptdp_rows(doc)
    missing = split_fused(rows)
    items = []
    for base, row in sorted(rows.items()):
        if row["count"] <= 0:
            continue
        sizes = dict(row["sizes"])
        if row["kind"] == "embedding_forward":  # its benchmark's sizes are b, s, h
            sizes.setdefault("Vt", vocab)
        items.append({"key": base, "kind": row["kind"], "family": FAMILY_OF[row["kind"]], "sizes": sizes,
                      "count": row["count"], "ptdp_us": row["us"], "ptdp_samples": row["samples"]})
    return items, missing


def family_rows(items, torch_ops):
    """Per family (attention once per PyTorch variant): ptdp µs, torch µs, ratio = torch/ptdp,
    over the ops both sides timed. torch_ops: torch_ops.py's "ops" list."""
    torch_us = {(op["key"], op["variant"]): op["us"] for op in torch_ops}
    out = []
    for family in FAMILIES:
        members = [i for i in items if i["family"] == family]
        for variant in ("sdpa", "explicit") if family == "attention" else ("eager",):
            timed = [i for i in members if (i["key"], variant) in torch_us]
            if not timed:
                continue
            ptdp = sum(i["count"] * i["ptdp_us"] for i in timed)
            torch = sum(i["count"] * torch_us[(i["key"], variant)] for i in timed)
            name = f"{family} ({'SDPA' if variant == 'sdpa' else 'explicit'})" if family == "attention" else family
            out.append({"family": name, "ptdp_us": ptdp, "torch_us": torch,
                        "ratio": torch / ptdp if ptdp > 0 else None, "ops": [i["key"] for i in timed]})
    return out


def ratio_table(title, columns, rows):
    """title, the 4 column headers, then one line per row (name, ptdp, torch, ratio or None)."""
    lines = [title, f"  {columns[0]:<28} {columns[1]:>12} {columns[2]:>12} {columns[3]:>7}"]
    for name, ptdp, torch, ratio in rows:
        shown = f"{ratio:.2f}" if ratio is not None else "n/a"
        lines.append(f"  {name:<28} {ptdp:>12.2f} {torch:>12.2f} {shown:>7}")
    return "\n".join(lines)


def ops_table(config_name, rows):
    """The per-family table of one config, as printed."""
    return ratio_table(f"{config_name}: per op family, µs per micro-batch (Σ occurrences × µs per call)",
                       ("family", "ptdp µs", "torch µs", "ratio"),
                       [(r["family"], r["ptdp_us"], r["torch_us"], r["ratio"]) for r in rows])
