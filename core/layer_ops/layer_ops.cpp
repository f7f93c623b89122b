// A decoder layer's op records (see layer_ops.h), pass by pass in the order of
// attention_block.cpp and mlp_block.cpp. Letters: b micro-batch, s sequence,
// n = b·s tokens, rows = n or n/t (sequence parallelism), h hidden, a and g the
// query and kv heads on this rank, d head dim, f MLP width on this rank, t the
// tensor-parallel size, e bytes an element.
#include "core/layer_ops/layer_ops.h"

#include <utility>

namespace ptdp {

namespace {

double as_double(std::int64_t v) { return static_cast<double>(v); }

// Memory-bound work as priced: bytes and kernel launches.
struct Traffic {
  double bytes = 0;
  int kernels = 0;
  Traffic twice() const { return {2 * bytes, 2 * kernels}; }
};

class LayerRecords {
 public:
  LayerRecords(const Model& m, const Plan& p, const RankDims& r)
      : m_(m), p_(p), r_(r), sp_(p.sequence_parallel && r.t > 1), e_(r.e) {}

  // The forward's ops; `pass` recompute: the same ops again in backward, keeping nothing new.
  void forward(Pass pass) {
    pass_ = pass;
    attention_forward();
    mlp_forward();
  }
  void backward() {
    pass_ = Pass::backward;
    mlp_backward();
    attention_backward();
  }
  std::vector<LayerOp> take() { return std::move(ops_); }

 private:
  LayerOp& add(OpKind kind, LayerPart part, std::vector<std::int64_t> sizes, Traffic t = {}) {
    LayerOp op;
    op.kind = kind, op.part = part, op.pass = pass_, op.sizes = std::move(sizes);
    op.bytes = t.bytes, op.kernels = t.kernels;
    ops_.push_back(std::move(op));
    return ops_.back();
  }
  // A GEMM C (gm × gn) = A (gm × gk) · B (gk × gn) of kind `kind`.
  LayerOp& gemm(OpKind kind, LayerPart part, std::int64_t gm, std::int64_t gn, std::int64_t gk, Traffic t = {}) {
    LayerOp& op = add(kind, part, {gm, gn, gk}, t);
    op.gemm = {as_double(gm), as_double(gn), as_double(gk), 1};
    op.flops = op.gemm.flops();
    return op;
  }
  // Bytes kept for backward: none by a recompute, and under full recompute only
  // the layer's input (kept by the first norm, which reads it in backward).
  void keep(LayerOp& op, std::int64_t bytes) const {
    if (pass_ == Pass::forward && (p_.recompute != Recompute::full || op.part == LayerPart::ln1)) op.saved = bytes;
  }

  std::int64_t rows_h() const { return r_.nr * r_.h; }
  std::int64_t q_width() const { return r_.a * r_.head_dim; }
  std::int64_t kv_width() const { return 2 * r_.g * r_.head_dim; }
  std::int64_t fc1_width() const { return (swiglu() ? 2 : 1) * r_.f; }
  bool swiglu() const { return m_.activation == Activation::swiglu; }
  bool layernorm() const { return m_.norm == Norm::layernorm; }
  bool dropout() const { return m_.dropout > 0; }
  std::int64_t norm_stats() const { return layernorm() ? 8 : 4; }  // fp32 mean and rstd, or rstd, a row

  Traffic norm_traffic() const { return {2 * as_double(rows_h()) * e_, 1}; }
  Traffic residual_traffic() const {
    const double mask = dropout() ? 1 : 0;
    if (p_.fused_ops) return {(3 * e_ + mask) * as_double(rows_h()), 1};
    const double bias = m_.bias ? 2 * e_ : 0, drop = dropout() ? 2 * e_ + 1 : 0;
    return {(3 * e_ + bias + drop) * as_double(rows_h()), 1 + (m_.bias ? 1 : 0) + (dropout() ? 1 : 0)};
  }
  double nf() const { return as_double(r_.n * r_.f) * e_; }  // one (n, f/t) tensor
  Traffic gelu_traffic() const {
    if (p_.fused_ops) return {2 * nf(), 1};
    return {(m_.bias ? 4 : 2) * nf(), m_.bias ? 2 : 1};
  }
  Traffic swiglu_traffic() const { return p_.fused_ops ? Traffic{3 * nf(), 1} : Traffic{5 * nf(), 2}; }
  Traffic fc1_bias_traffic() const {  // SwiGLU's fc1 bias on 2f/t, apart when unfused
    return swiglu() && m_.bias && !p_.fused_ops ? Traffic{4 * nf(), 1} : Traffic{};
  }
  Traffic rope_traffic() const {
    return {2 * as_double(r_.n) * as_double(r_.head_dim) * e_ * as_double(r_.a + r_.g), p_.fused_ops ? 1 : 2};
  }
  double attention_io() const { return as_double(r_.n) * as_double(r_.head_dim) * e_ * as_double(2 * r_.a + 2 * r_.g); }
  std::vector<std::int64_t> head_sizes() const { return {r_.b, r_.s, r_.a, r_.head_dim, r_.g}; }

  // f before a column-parallel GEMM (forward) and g's conjugate before a
  // row-parallel one's data gradient: an all-gather under sequence parallelism.
  OpCollective gather_before() const {
    if (!sp_) return {};
    return {Collective::all_gather, as_double(r_.n * r_.h) * e_, r_.t, true, 1};
  }
  // g after a row-parallel GEMM (forward) and f's conjugate after a
  // column-parallel one's data gradient: the (b, s, h) partial sums.
  OpCollective sum_after() const {
    return {sp_ ? Collective::reduce_scatter : Collective::all_reduce, as_double(r_.n * r_.h) * e_, r_.t, false, 1};
  }
  // Sequence parallelism: a norm's gain (and bias) gradients of local rows, (h) fp32 each.
  OpCollective norm_grads_sum() const {
    if (!sp_) return {};
    return {Collective::all_reduce, 4 * as_double(r_.h), r_.t, false, layernorm() ? 2 : 1};
  }

  // The attention core: the s×s scores of b·a heads as its GEMM; backward (`times` 2)
  // moves and computes twice the forward's (FLOPs counted over the full square).
  LayerOp& attention_core(OpKind kind, int times) {
    LayerOp& op = add(kind, LayerPart::core, head_sizes(), {times * attention_io(), 0});
    op.gemm = {as_double(r_.s), as_double(r_.s), as_double(r_.head_dim), as_double(r_.b * r_.a)};
    op.flops =
        times * 4 * as_double(r_.b) * as_double(r_.a) * as_double(r_.s) * as_double(r_.s) * as_double(r_.head_dim);
    return op;
  }
  LayerOp& norm(LayerPart part) {
    return add(layernorm() ? OpKind::layernorm_forward : OpKind::rmsnorm_forward, part, {r_.nr, r_.h}, norm_traffic());
  }
  void attention_forward();
  void mlp_forward();
  void mlp_backward();
  void attention_backward();

  const Model& m_;
  const Plan& p_;
  const RankDims& r_;
  const bool sp_;
  const double e_;
  Pass pass_ = Pass::forward;
  std::vector<LayerOp> ops_;
};

void LayerRecords::attention_forward() {
  const std::int64_t n = r_.n, h = r_.h, e = r_.e, kept_norm = 2 * rows_h() * e + r_.nr * norm_stats();
  keep(norm(LayerPart::ln1), pass_ == Pass::forward && p_.recompute == Recompute::full ? rows_h() * e : kept_norm);
  LayerOp& q = gemm(OpKind::linear_forward, LayerPart::q, n, q_width(), h);
  q.collective = gather_before();
  keep(q, n * q_width() * e);
  LayerOp& kv = gemm(OpKind::linear_forward, LayerPart::kv, n, kv_width(), h);
  kv.with_previous = true;
  keep(kv, n * kv_width() * e);
  if (m_.position == Position::rope) add(OpKind::rope_forward, LayerPart::qk, head_sizes(), rope_traffic());
  LayerOp& core = attention_core(OpKind::attention_forward, 1);
  // Its output, and the state its backward reads (dropped by selective recompute):
  // unfused, the probabilities (b, a, s, s); fused, the fp32 log-sum-exp (b, a, s).
  const std::int64_t state = p_.attention == Attention::flash ? n * r_.a * 4 : n * r_.a * r_.s * e;
  keep(core, n * q_width() * e + (p_.recompute == Recompute::none ? state : 0));
  gemm(OpKind::linear_forward, LayerPart::proj, n, h, q_width()).collective = sum_after();
  if (layernorm() && m_.bias) {  // x2 = proj + b + x and its layernorm in one call
    const Traffic res = residual_traffic(), ln = norm_traffic();
    keep(add(OpKind::bias_residual_layernorm, LayerPart::ln2, {r_.nr, h}, {res.bytes + ln.bytes, res.kernels + ln.kernels}),
         kept_norm);
    return;
  }
  add(m_.bias ? OpKind::bias_residual_add : OpKind::add, LayerPart::residual1, {r_.nr, h}, residual_traffic());
  keep(norm(LayerPart::ln2), kept_norm);
}

void LayerRecords::mlp_forward() {
  const std::int64_t n = r_.n, h = r_.h, e = r_.e;
  if (swiglu()) {
    LayerOp& fc1 = gemm(OpKind::linear_forward, LayerPart::fc1, n, fc1_width(), h, fc1_bias_traffic());
    fc1.collective = gather_before();
    keep(fc1, n * fc1_width() * e);
    keep(add(OpKind::swiglu_forward, LayerPart::act, {n, r_.f}, swiglu_traffic()), n * r_.f * e);
  } else {
    LayerOp& fc1 = gemm(OpKind::linear_gelu_forward, LayerPart::fc1, n, r_.f, h, gelu_traffic());
    fc1.collective = gather_before();
    keep(fc1, 2 * n * r_.f * e);  // before and after GeLU
  }
  gemm(OpKind::linear_forward, LayerPart::fc2, n, h, r_.f).collective = sum_after();
  add(m_.bias ? OpKind::bias_residual_add : OpKind::add, LayerPart::residual2, {r_.nr, h}, residual_traffic());
}

// mlp_block.cpp's backward: fc2's data gradient (with GeLU's), the weight
// gradients, fc1's data gradient, the norm, the residual.
void LayerRecords::mlp_backward() {
  const std::int64_t n = r_.n, h = r_.h;
  const OpKind norm_grad = layernorm() ? OpKind::layernorm_backward : OpKind::rmsnorm_backward;
  if (swiglu()) {
    gemm(OpKind::linear_data_grad, LayerPart::fc2, n, r_.f, h).collective = gather_before();
    add(OpKind::swiglu_backward, LayerPart::act, {n, r_.f}, swiglu_traffic().twice());
    if (m_.bias) add(OpKind::bias_backward, LayerPart::fc1, {n, fc1_width()}, fc1_bias_traffic().twice());
  } else {
    gemm(OpKind::linear_gelu_backward, LayerPart::fc2, n, r_.f, h, gelu_traffic().twice()).collective = gather_before();
  }
  gemm(OpKind::linear_weight_grad, LayerPart::fc2, h, r_.f, n);
  gemm(OpKind::linear_data_grad, LayerPart::fc1, n, h, fc1_width()).collective = sum_after();
  gemm(OpKind::linear_weight_grad, LayerPart::fc1, fc1_width(), h, n);
  add(norm_grad, LayerPart::ln2, {r_.nr, h}, norm_traffic().twice()).collective = norm_grads_sum();
  add(OpKind::add, LayerPart::residual2, {r_.nr, h}, residual_traffic().twice());
}

// attention_block.cpp's backward: proj, the core (recomputed first under
// selective recompute), RoPE, q's and kv's gradients, the norm, the residual.
void LayerRecords::attention_backward() {
  const std::int64_t n = r_.n, h = r_.h;
  gemm(OpKind::linear_data_grad, LayerPart::proj, n, q_width(), h).collective = gather_before();
  gemm(OpKind::linear_weight_grad, LayerPart::proj, h, q_width(), n);
  if (p_.recompute == Recompute::selective) {  // the attention state, dropped in forward, first
    pass_ = Pass::recompute;
    attention_core(OpKind::attention_forward, 1);
    pass_ = Pass::backward;
  }
  attention_core(OpKind::attention_backward, 2);
  if (m_.position == Position::rope) add(OpKind::rope_backward, LayerPart::qk, head_sizes(), rope_traffic().twice());
  gemm(OpKind::linear_data_grad, LayerPart::q, n, h, q_width()).collective = sum_after();
  gemm(OpKind::linear_data_grad, LayerPart::kv, n, h, kv_width()).with_previous = true;
  add(OpKind::add, LayerPart::kv_sum, {n, h});
  gemm(OpKind::linear_weight_grad, LayerPart::q, q_width(), h, n);
  LayerOp& kv = gemm(OpKind::linear_weight_grad, LayerPart::kv, kv_width(), h, n);
  kv.with_previous = true;
  if (r_.kv_copies > 1) {  // t > g: the ranks sharing a kv head sum its fp32 gradients each micro-batch
    const double grads = as_double(2 * r_.head_dim * h) + (m_.bias ? as_double(2 * r_.head_dim) : 0);
    kv.collective = {Collective::all_reduce, 4 * grads, static_cast<int>(r_.kv_copies), false, 1};
  }
  add(layernorm() ? OpKind::layernorm_backward : OpKind::rmsnorm_backward, LayerPart::ln1, {r_.nr, h},
      norm_traffic().twice())
      .collective = norm_grads_sum();
  add(OpKind::add, LayerPart::residual1, {r_.nr, h}, residual_traffic().twice());
}

}  // namespace

std::vector<LayerOp> layer_ops(const Model& m, const Plan& p, const RankDims& r, Pass pass) {
  LayerRecords records(m, p, r);
  if (pass == Pass::forward) {
    records.forward(Pass::forward);
    return records.take();
  }
  if (p.recompute == Recompute::full) records.forward(Pass::recompute);
  records.backward();
  std::vector<LayerOp> ops = records.take();
  if (pass == Pass::recompute) std::erase_if(ops, [](const LayerOp& o) { return o.pass != Pass::recompute; });
  return ops;
}

}  // namespace ptdp
