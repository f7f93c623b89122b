// Forward and backward of a tensor-parallel decoder layer.
// Forward:  ln1 = LN(x); qkv = ln1·Wqkvᵀ; attn = Attn(qkv); x2 = x + g(attn·Wprojᵀ) + bproj;
//           ln2 = LN(x2); z = GeLU(ln2·W1ᵀ + b1); y = x2 + g(z·W2ᵀ) + b2.
// g is the all-reduce of the row-parallel partial sums (identity in backward);
// its conjugate f (identity forward) all-reduces the input gradient of each
// column-parallel projection in backward. Under sequence parallelism x, x2, the
// layernorms and y hold this rank's (b, s/t, h) token rows: g becomes a
// reduce-scatter (conjugate: all-gather of the output gradient) and f an
// all-gather of the layernorm output (conjugate: reduce-scatter of its gradient).
// LN outputs are kept as local rows and gathered again in backward. Under
// tp_comm_overlap the f before each column-parallel GEMM (forward, and the output
// gradient's gather in backward) and the g after each row-parallel one (and the
// input gradient's reduce-scatter) run as rings, block by block with the GEMMs
// (tp_overlap.h).
#include "core/model/transformer_layer.h"

#include "core/model/token_split.h"

namespace ptdp {

void LayerActs::drop_all_but_input() {
  Tensor keep = x;
  *this = LayerActs{};
  x = keep;
}

TransformerLayer::TransformerLayer(ModelContext& ctx, int layer_index) : ctx_(ctx) {
  const std::int64_t h = ctx.model.hidden, f = ctx.model.ffn();
  const int t = ctx.t();
  heads_ = ctx.model.heads / t;
  const std::string p = "layers." + std::to_string(layer_index) + ".";
  const ShardSpec rep{}, rows{0, t, ctx.tp_rank()}, cols{1, t, ctx.tp_rank()};
  const auto make = [&](const char* name, Shape shape, ShardSpec shard, Init init, float std, bool decay) {
    return make_param(ctx.ops, p + name, std::move(shape), shard, init, std, ctx.seed(), decay);
  };
  const float std = ctx.init_std(), out_std = ctx.residual_init_std();
  ln1_g_ = make("ln1.weight", {h}, rep, Init::ones, 0, false);
  ln1_b_ = make("ln1.bias", {h}, rep, Init::zeros, 0, false);
  qkv_w_ = make("qkv.weight", {3 * h, h}, rows, Init::normal, std, true);
  qkv_b_ = make("qkv.bias", {3 * h}, rows, Init::zeros, 0, false);
  proj_w_ = make("proj.weight", {h, h}, cols, Init::normal, out_std, true);
  proj_b_ = make("proj.bias", {h}, rep, Init::zeros, 0, false);
  ln2_g_ = make("ln2.weight", {h}, rep, Init::ones, 0, false);
  ln2_b_ = make("ln2.bias", {h}, rep, Init::zeros, 0, false);
  fc1_w_ = make("fc1.weight", {f, h}, rows, Init::normal, std, true);
  fc1_b_ = make("fc1.bias", {f}, rows, Init::zeros, 0, false);
  fc2_w_ = make("fc2.weight", {h, f}, cols, Init::normal, out_std, true);
  fc2_b_ = make("fc2.bias", {h}, rep, Init::zeros, 0, false);
  // Replicated parameters have identical gradients on every tensor-parallel
  // rank; only rank 0's copy counts in the global gradient norm.
  for (Param* q : params())
    if (q->shard.dim < 0) q->count_in_norm = ctx.tp_rank() == 0;
}

ParamList TransformerLayer::params() const {
  return {ln1_g_.get(), ln1_b_.get(), qkv_w_.get(), qkv_b_.get(), proj_w_.get(), proj_b_.get(),
          ln2_g_.get(), ln2_b_.get(), fc1_w_.get(), fc1_b_.get(), fc2_w_.get(), fc2_b_.get()};
}

Tensor TransformerLayer::attention_block(LayerActs& a, bool keep_scores) {
  Ops& ops = ctx_.ops;
  a.ln1 = layernorm_forward(ops, a.x, *ln1_g_, *ln1_b_);
  Tensor ln1 = gathered_tokens(ctx_, a.ln1.y);  // f: (b, s, h)
  const std::int64_t b = ln1.dim(0), s = ln1.dim(1), h = ln1.dim(2);
  a.qkv = ops.empty({b, s, qkv_w_->value.dim(0)});
  gather_tokens_then(ctx_, a.ln1.y, ln1, [&](std::int64_t row, std::int64_t n) {
    Tensor out = token_rows(a.qkv, row, n);
    ops.linear_forward(token_rows(ln1, row, n), qkv_w_->value, qkv_b_->value, out);
  });
  a.attn = ops.empty({b, s, proj_w_->value.dim(1)});
  a.attn_saved = ops.attention_forward(a.qkv, heads_, a.attn);
  if (!keep_scores) a.attn_saved = Tensor{};
  // g: (b, s/t, h) under sequence parallelism
  Tensor proj = reduce_tokens_of(ctx_, {b, s, h}, [&](std::int64_t row, std::int64_t n, Tensor& out) {
    ops.linear_forward(token_rows(a.attn, row, n), proj_w_->value, Tensor{}, out);
  });
  // x2 = proj + bias + x, and ln2 = LN(x2) for the MLP block, in one pass
  // when the backend fuses them (the same values as the two ops).
  a.ln2 = empty_norm_acts(ops, proj);
  ops.bias_residual_layernorm(proj, proj_b_->value, a.x, ln2_g_->value, ln2_b_->value, proj, a.ln2.y, a.ln2.mean,
                              a.ln2.rstd);
  a.x2 = proj;
  return a.x2;
}

Tensor TransformerLayer::mlp_block(LayerActs& a) {
  Ops& ops = ctx_.ops;
  Tensor ln2 = gathered_tokens(ctx_, a.ln2.y);  // f: (b, s, h)
  const std::int64_t b = ln2.dim(0), s = ln2.dim(1), h = ln2.dim(2);
  a.fc1 = ops.empty({b, s, fc1_w_->value.dim(0)});
  a.gelu = ops.empty({b, s, fc1_w_->value.dim(0)});
  gather_tokens_then(ctx_, a.ln2.y, ln2, [&](std::int64_t row, std::int64_t n) {
    Tensor pre = token_rows(a.fc1, row, n), out = token_rows(a.gelu, row, n);
    ops.linear_gelu_forward(token_rows(ln2, row, n), fc1_w_->value, fc1_b_->value, pre, out);
  });
  // g: sum the partial products of the t shards, then + b + residual (fused when the backend can)
  Tensor y = reduce_tokens_of(ctx_, {b, s, h}, [&](std::int64_t row, std::int64_t n, Tensor& out) {
    ops.linear_forward(token_rows(a.gelu, row, n), fc2_w_->value, Tensor{}, out);
  });
  ops.bias_residual_add(y, fc2_b_->value, a.x2, y);
  return y;
}

Tensor TransformerLayer::forward(const Tensor& x, LayerActs& acts, bool keep_scores) {
  acts.x = x;
  attention_block(acts, keep_scores);
  return mlp_block(acts);
}

// dy (b, s, h) -> gradient at x2 (b, s, h), including the residual path
// (both (b, s/t, h) under sequence parallelism). Each linear layer's data
// gradient runs beside its collective (block by block under tp_comm_overlap);
// its weight and bias gradients follow once over all n rows, as Megatron's.
Tensor TransformerLayer::mlp_backward(const Tensor& dy, LayerActs& a, DeferredWeightGrads* later) {
  Ops& ops = ctx_.ops;
  Tensor none;  // a gradient not computed by that call
  Tensor dy_full = gathered_tokens(ctx_, dy);  // conjugate of g's reduce-scatter
  Tensor dfc1 = ops.empty(a.fc1.shape());
  gather_tokens_then(ctx_, dy, dy_full, [&](std::int64_t row, std::int64_t n) {
    Tensor d = token_rows(dfc1, row, n);
    ops.linear_gelu_backward(token_rows(dy_full, row, n), token_rows(a.gelu, row, n), token_rows(a.fc1, row, n),
                             fc2_w_->value, d, none, none, fc1_b_->grad);
  });
  // fc2's bias gradient: Σ rows of the full dy (the same on every tensor-parallel
  // rank, so the row-parallel bias needs no reduction).
  Tensor dw2 = weight_grad_target(*fc2_w_, dy_full, a.gelu, later);
  ops.linear_backward(dy_full, a.gelu, fc2_w_->value, none, dw2, fc2_b_->grad);
  const Tensor ln2 = gather_tokens(ctx_, a.ln2.y);  // (b, s, h) again for dw1
  // f's conjugate: each shard saw all of ln2
  Tensor dln2 = reduce_tokens_of(ctx_, ln2.shape(), [&](std::int64_t row, std::int64_t n, Tensor& out) {
    ops.linear_backward(token_rows(dfc1, row, n), token_rows(ln2, row, n), fc1_w_->value, out, none, none);
  });
  Tensor dw1 = weight_grad_target(*fc1_w_, dfc1, ln2, later);
  ops.linear_backward(dfc1, ln2, fc1_w_->value, none, dw1, none);  // fc1's bias gradient came with dfc1
  Tensor dx2 = layernorm_backward_tokens(ctx_, dln2, a.x2, a.ln2, *ln2_g_, *ln2_b_);
  ops.add(dx2, dy, dx2);
  return dx2;
}

// dx2 (b, s, h) -> gradient at x (b, s, h), including the residual path.
Tensor TransformerLayer::attention_backward(const Tensor& dx2, LayerActs& a, DeferredWeightGrads* later) {
  Ops& ops = ctx_.ops;
  Tensor none;
  Tensor dattn = ops.empty(a.attn.shape());
  Tensor dx2_full = gathered_tokens(ctx_, dx2);
  gather_tokens_then(ctx_, dx2, dx2_full, [&](std::int64_t row, std::int64_t n) {
    Tensor d = token_rows(dattn, row, n);
    ops.linear_backward(token_rows(dx2_full, row, n), token_rows(a.attn, row, n), proj_w_->value, d, none, none);
  });
  // The row-parallel bias's gradient Σ rows of the full dx2, as fc2's above.
  Tensor dw_proj = weight_grad_target(*proj_w_, dx2_full, a.attn, later);
  ops.linear_backward(dx2_full, a.attn, proj_w_->value, none, dw_proj, proj_b_->grad);
  if (!a.attn_saved.defined()) {  // selective recompute: rebuild the attention state
    Tensor again = ops.empty(a.attn.shape());
    a.attn_saved = ops.attention_forward(a.qkv, heads_, again);
  }
  Tensor dqkv = ops.empty(a.qkv.shape());
  ops.attention_backward(dattn, a.qkv, a.attn, a.attn_saved, heads_, dqkv);
  const Tensor ln1 = gather_tokens(ctx_, a.ln1.y);  // (b, s, h) again for dw_qkv
  Tensor dln1 = reduce_tokens_of(ctx_, ln1.shape(), [&](std::int64_t row, std::int64_t n, Tensor& out) {
    ops.linear_backward(token_rows(dqkv, row, n), token_rows(ln1, row, n), qkv_w_->value, out, none, none);
  });  // f's conjugate
  Tensor dw_qkv = weight_grad_target(*qkv_w_, dqkv, ln1, later);
  ops.linear_backward(dqkv, ln1, qkv_w_->value, none, dw_qkv, qkv_b_->grad);
  Tensor dx = layernorm_backward_tokens(ctx_, dln1, a.x, a.ln1, *ln1_g_, *ln1_b_);
  ops.add(dx, dx2, dx);
  return dx;
}

Tensor TransformerLayer::backward(const Tensor& dy, LayerActs& acts, DeferredWeightGrads* later) {
  Tensor dx2 = mlp_backward(dy, acts, later);
  return attention_backward(dx2, acts, later);
}

}  // namespace ptdp
