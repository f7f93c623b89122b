// Parameter and FLOP counts; a layer's FLOPs from its op records (core/layer_ops/layer_ops.h).
#include "core/accounting/flops.h"

#include "core/config/rank_dims.h"
#include "core/layer_ops/layer_ops.h"

namespace ptdp {

namespace {
double d(int x) { return static_cast<double>(x); }

// Output width of the kv projection: keys and values of g heads, 2·g·d (GPT: 2h).
std::int64_t kv_width(const Model& m) { return 2 * std::int64_t{m.kv()} * m.head_dim(); }
// Matrices of the MLP: up and down (gelu), gate, up and down (swiglu).
int mlp_matrices(const Model& m) { return m.activation == Activation::swiglu ? 3 : 2; }
}  // namespace

std::int64_t norm_parameter_count(const Model& m) {
  return (m.norm == Norm::layernorm ? 2 : 1) * std::int64_t{m.hidden};
}

std::int64_t layer_parameter_count(const Model& m) {
  const std::int64_t h = m.hidden, f = m.ffn(), kv = kv_width(m);
  const std::int64_t weights = 2 * h * h + h * kv + mlp_matrices(m) * h * f;
  // Biases: q, kv, out; the MLP's inner matrices (f each, gate and up for swiglu) and its out.
  const std::int64_t biases = m.bias ? (h + kv + h) + (mlp_matrices(m) - 1) * f + h : 0;
  return weights + biases + 2 * norm_parameter_count(m);
}

std::int64_t embedding_parameter_count(const Model& m) {
  const std::int64_t h = m.hidden, V = m.vocab;
  const std::int64_t positions = m.position == Position::learned ? std::int64_t{m.seq_len} * h : 0;
  const std::int64_t output = m.tied_embeddings ? 0 : V * h;
  return V * h + positions + output + norm_parameter_count(m);
}

std::int64_t parameter_count(const Model& m) {
  return std::int64_t{m.layers} * layer_parameter_count(m) + embedding_parameter_count(m);
}

double parameters_eq2(const Model& m) { return static_cast<double>(parameter_count(m) - norm_parameter_count(m)); }

namespace {

// The whole layer's records for one sequence (t = 1, b = 1): what a pass runs,
// as FLOPs a token (its GEMMs' weights) and a sequence (the attention scores).
struct PassWork {
  std::int64_t weights = 0;   // Σ out·in of its linears' GEMMs
  double attention = 0;       // FLOPs of its attention cores, one sequence
};

PassWork pass_work(const Model& m, Pass pass, Recompute recompute = Recompute::none) {
  Plan one;
  one.micro_batch = 1, one.recompute = recompute;
  PassWork w;
  for (const LayerOp& op : layer_ops(m, one, RankDims(m, one), pass)) {
    if (kind_traits(op.kind).basis == CostBasis::attention) w.attention += op.flops;
    else if (op.has_gemm()) w.weights += op.sizes[1] * op.sizes[2];  // y (tokens, out) = x (tokens, in) · Wᵀ
  }
  return w;
}

// 2·B·s·weights + B·attention: the FLOPs of a pass over `batch` sequences.
double pass_flops(const Model& m, const PassWork& w, double batch) {
  return 2 * batch * d(m.seq_len) * static_cast<double>(w.weights) + batch * w.attention;
}

}  // namespace

double layer_matmul_weights(const Model& m) { return static_cast<double>(pass_work(m, Pass::forward).weights); }

double attention_scores_flops(const Model& m, double batch) { return batch * pass_work(m, Pass::forward).attention; }

double layer_forward_flops(const Model& m, double batch) { return pass_flops(m, pass_work(m, Pass::forward), batch); }

double logit_flops(const Model& m, double batch) {
  return 6 * batch * d(m.seq_len) * d(m.hidden) * d(m.vocab);
}

double model_flops_eq3(const Model& m, double batch) {
  return 4 * d(m.layers) * layer_forward_flops(m, batch) + logit_flops(m, batch);
}

double model_flops_no_recompute(const Model& m, double batch) {
  return 3 * d(m.layers) * layer_forward_flops(m, batch) + logit_flops(m, batch);
}

double model_flops(const Model& m, double batch, Recompute r) {
  return r == Recompute::full ? model_flops_eq3(m, batch) : model_flops_no_recompute(m, batch);
}

double hardware_flops(const Model& m, double batch, Recompute r) {
  const double base = model_flops_no_recompute(m, batch);
  if (r == Recompute::none) return base;
  return base + d(m.layers) * pass_flops(m, pass_work(m, Pass::recompute, r), batch);
}

Utilization utilization(const Model& m, const Plan& p, double iteration_s, double peak_tflops) {
  const double gpus = p.world_size();
  if (!(iteration_s > 0) || !(peak_tflops > 0) || !(gpus > 0)) return {};
  const double peak_per_iteration = gpus * iteration_s * peak_tflops * 1e12;  // FLOPs the GPUs could do
  return {model_flops_no_recompute(m, p.global_batch) / peak_per_iteration,
          hardware_flops(m, p.global_batch, p.recompute) / peak_per_iteration};
}

}  // namespace ptdp
