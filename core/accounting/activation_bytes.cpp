// The two activation formulas: ptdp's tensors and Korthikanti et al.'s counts.
#include "core/accounting/activation_bytes.h"

#include <stdexcept>
#include <vector>

#include "core/layer_ops/layer_ops.h"

namespace ptdp {

std::string to_string(ActivationFormula f) { return f == ActivationFormula::ptdp ? "ptdp" : "korthikanti"; }

MemoryTraits memory_traits(Device device, Precision precision, bool fused_attention) {
  MemoryTraits tr;
  const bool half = device == Device::cuda && precision != Precision::fp32;
  tr.weight_bytes = half ? 2 : 4;
  tr.master_weights = half;
  tr.scores_materialized = !fused_attention;
  return tr;
}

namespace {

// Widths (elements a token) of the split tensors of one layer on this rank,
// for Korthikanti et al.'s counts.
struct SplitWidths {
  std::int64_t q;    // queries (and the attention output): a/t·d
  std::int64_t kv;   // keys and values of g/t kv heads (one replicated head when t > g): 2·g_r·d
  std::int64_t fc1;  // fc1's output: f/t (GeLU), gate and up 2f/t (SwiGLU)
  std::int64_t f;    // the activation's output, fc2's input: f/t
};

SplitWidths split_widths(const Model& m, const RankDims& r) {
  const std::int64_t q = r.a * r.head_dim;
  return {q, 2 * r.g * r.head_dim, (m.activation == Activation::swiglu ? 2 : 1) * r.f, r.f};
}

// A layer's records at the element size and attention state the traits say:
// their `saved` bytes are the tensors ptdp's layer keeps (core/layer_ops/layer_ops.h).
std::vector<LayerOp> kept_ops(const Model& m, const Plan& p, const RankDims& r, const MemoryTraits& tr, Pass pass) {
  Plan kept = p;
  kept.attention = tr.scores_materialized ? Attention::unfused : Attention::flash;
  RankDims at_traits = r;  // the attention choice is not a size: only the element size differs
  at_traits.e = tr.weight_bytes;
  return layer_ops(m, kept, at_traits, pass);
}

}  // namespace

// The bytes ptdp's layer keeps between forward and backward: each forward
// record's (LayerActs: the input and the norms' outputs and statistics, q, kv,
// the attention output and state, fc1's output and the activation's; under full
// recompute the input alone, under selective all but the attention state).
std::int64_t layer_activation_bytes(const Model& m, const Plan& p, const RankDims& r, const MemoryTraits& tr) {
  std::int64_t bytes = 0;
  for (const LayerOp& op : kept_ops(m, p, r, tr, Pass::forward)) bytes += op.saved;
  return bytes;
}

// HeadActs: x (rows, h) and lnf.y (rows, h) with lnf's statistics (rows)
// fp32; logits (n, V'/t), row_max and sum_exp (n) fp32. The embedding keeps
// nothing: its output is the first layer's x.
std::int64_t head_activation_bytes(const Model& m, const RankDims& r, const MemoryTraits& tr) {
  const std::int64_t norm_stats = m.norm == Norm::layernorm ? 8 : 4;  // fp32 mean and rstd, or rstd, a row
  return r.nr * (2 * r.h * tr.weight_bytes + norm_stats) + r.n * (r.vt * tr.weight_bytes + 2 * 4);
}

namespace {

ActivationBytes ptdp_formula(const Model& m, const Plan& p, const RankDims& r, const MemoryTraits& tr) {
  Plan none = p;
  none.recompute = Recompute::none;
  ActivationBytes a;
  a.layer = layer_activation_bytes(m, p, r, tr);
  // Backward rebuilds what the layer dropped (full: all but x; selective: the attention state).
  a.recompute = layer_activation_bytes(m, none, r, tr) - a.layer;
  a.head = head_activation_bytes(m, r, tr);
  return a;
}

// Korthikanti eq. 2 and Table 2, per layer: at f = 4h with dropout and 16-bit
// activations n·h·(10 + 24/t) + 5·S without recompute (S = b·(a/t)·s² scores),
// n·h·(34/t) + 5·S with sequence parallelism, the score terms gone under
// selective recompute, and 2·n·h (2·n·h/t with SP) under full recompute.
// In doubles as the paper writes them (every term is a whole number of bytes).
double korthikanti_layer(const Model& m, const Plan& p, const RankDims& r, const MemoryTraits& tr, Recompute rc) {
  const double n = static_cast<double>(r.n), h = static_cast<double>(r.h), t = r.t, e = tr.weight_bytes;
  const double heads = static_cast<double>(r.a);
  const bool dropout = m.dropout > 0;
  const double replicated_div = p.sequence_parallel ? t : 1.0;
  if (rc == Recompute::full) return e * n * h / replicated_div;
  // Inputs of the two layernorms, of QKV and of fc1 (full width), and two dropout masks.
  const double replicated = (4 * e * n * h + (dropout ? 2 * n * h : 0)) / replicated_div;
  // Q and the projection input (a/t·d each), K and V (g_r·d each), and the MLP's
  // GeLU and fc2 inputs (f/t each) or SwiGLU's gate, up and fc2 inputs (3f/t).
  const SplitWidths w = split_widths(m, r);
  const double split = e * n * static_cast<double>(2 * w.q + w.kv + w.fc1 + w.f);
  double scores = 0;
  if (!tr.scores_materialized) scores = 4 * n * heads;  // fp32 log-sum-exp per (token, head)
  else if (rc == Recompute::none)  // softmax input, output and dropout mask
    scores = p.micro_batch * heads * m.seq_len * static_cast<double>(m.seq_len) * (e + (dropout ? 1 + e : 0));
  return replicated + split + scores;
}

ActivationBytes korthikanti_formula(const Model& m, const Plan& p, const RankDims& r, const MemoryTraits& tr) {
  const double n = static_cast<double>(r.n), h = static_cast<double>(r.h), e = tr.weight_bytes;
  const auto bytes = [](double b) { return static_cast<std::int64_t>(b); };
  ActivationBytes a;
  a.layer = bytes(korthikanti_layer(m, p, r, tr, p.recompute));
  // The layer being recomputed, whole.
  if (p.recompute != Recompute::none) a.recompute = bytes(korthikanti_layer(m, p, r, tr, Recompute::none));
  a.embedding = m.dropout > 0 ? bytes(n * h) : 0;                                // dropout mask
  a.head = bytes(e * n * h + (4 + e) * n * static_cast<double>(r.vt));  // final layernorm input, logits
  return a;
}

}  // namespace

ActivationBytes activation_bytes(const Model& m, const Plan& p, const RankDims& r, const MemoryTraits& tr,
                                 ActivationFormula f) {
  ActivationBytes a;
  switch (f) {
    case ActivationFormula::ptdp: a = ptdp_formula(m, p, r, tr); break;
    case ActivationFormula::korthikanti: a = korthikanti_formula(m, p, r, tr); break;
    default: throw std::invalid_argument("activation_bytes: unknown formula");
  }
  // A deferred W keeps each weight-gradient GEMM dW (m, k) = dyᵀ (m, n) · x (n, k):
  // dy of each, x once for kv beside q (one input).
  for (const LayerOp& op : kept_ops(m, p, r, tr, Pass::backward)) {
    if (op.kind != OpKind::linear_weight_grad) continue;
    a.weight_grad_dy += op.sizes[0] * op.sizes[2] * tr.weight_bytes;
    if (!op.with_previous) a.weight_grad_x += op.sizes[1] * op.sizes[2] * tr.weight_bytes;
  }
  return a;
}

}  // namespace ptdp
