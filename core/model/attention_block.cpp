// The attention half of a decoder layer, forward and backward (the layer's
// equations in transformer_layer.cpp). q and kv come from two column-parallel
// GEMMs on the same gathered norm output; RoPE turns q and k in place after
// them (position = rope), so LayerActs keeps the turned q and kv.
#include "core/model/kv_sharing.h"
#include "core/model/token_split.h"
#include "core/model/transformer_layer.h"

namespace ptdp {

Tensor TransformerLayer::q_heads(const Tensor& q) const {
  const std::int64_t head_dim = ctx_.model.head_dim();
  return q.view({q.dim(0), q.dim(1), q.dim(2) / head_dim, head_dim});
}

Tensor TransformerLayer::kv_heads(const Tensor& kv) const {
  const std::int64_t head_dim = ctx_.model.head_dim();
  return kv.view({kv.dim(0), kv.dim(1), kv.dim(2) / (2 * head_dim), 2, head_dim});
}

Tensor TransformerLayer::attention_block(LayerActs& a, bool keep_scores) {
  Ops& ops = ctx_.ops;
  a.ln1 = norm_forward(ops, a.x, ln1_);
  Tensor ln1 = gathered_tokens(ctx_, a.ln1.y);  // f: (b, s, h)
  const std::int64_t b = ln1.dim(0), s = ln1.dim(1), h = ln1.dim(2);
  a.q = ops.empty({b, s, q_w_->value.dim(0)});
  a.kv = ops.empty({b, s, kv_w_->value.dim(0)});
  gather_tokens_then(ctx_, a.ln1.y, ln1, [&](std::int64_t row, std::int64_t n) {
    const Tensor in = token_rows(ln1, row, n);
    Tensor q = token_rows(a.q, row, n), kv = token_rows(a.kv, row, n);
    ops.linear_forward(in, q_w_->value, value_of(q_b_), q);
    ops.linear_forward(in, kv_w_->value, value_of(kv_b_), kv);
  });
  Tensor q = q_heads(a.q), kv = kv_heads(a.kv);
  if (ctx_.model.position == Position::rope) ops.rope_forward(q, kv, ctx_.model.rope_theta);
  a.attn = ops.empty({b, s, proj_w_->value.dim(1)});
  Tensor attn = q_heads(a.attn);
  a.attn_saved = ops.attention_forward(q, kv, attn);
  if (!keep_scores) a.attn_saved = Tensor{};
  // g: (b, s/t, h) under sequence parallelism
  Tensor proj = reduce_tokens_of(ctx_, {b, s, h}, [&](std::int64_t row, std::int64_t n, Tensor& out) {
    ops.linear_forward(token_rows(a.attn, row, n), proj_w_->value, Tensor{}, out);
  });
  // x2 = proj + bias + x, and its norm for the MLP block, in one pass when
  // the backend fuses them (the same values as the separate ops).
  a.ln2 = residual_norm_forward(ops, proj, value_of(proj_b_), a.x, ln2_, proj);
  a.x2 = proj;
  return a.x2;
}

// dx2 (b, s, h) -> gradient at x (b, s, h), including the residual path.
Tensor TransformerLayer::attention_backward(const Tensor& dx2, LayerActs& a, DeferredWeightGrads* later) {
  Ops& ops = ctx_.ops;
  Tensor none;
  Tensor dattn = ops.empty(a.attn.shape());
  Tensor dx2_full = gathered_tokens(ctx_, dx2);
  gather_tokens_then(ctx_, dx2, dx2_full, [&](std::int64_t row, std::int64_t n) {
    Tensor dattn_rows = token_rows(dattn, row, n);
    ops.linear_backward(token_rows(dx2_full, row, n), token_rows(a.attn, row, n), proj_w_->value, dattn_rows, none,
                        none);
  });
  // The row-parallel bias's gradient Σ rows of the full dx2, as fc2's.
  Tensor dw_proj = weight_grad_target(*proj_w_, dx2_full, a.attn, later);
  Tensor dproj_b = grad_of(proj_b_);
  ops.linear_backward(dx2_full, a.attn, proj_w_->value, none, dw_proj, dproj_b);
  const Tensor q = q_heads(a.q), kv = kv_heads(a.kv);
  if (!a.attn_saved.defined()) {  // selective recompute: rebuild the attention state
    Tensor again = ops.empty(q.shape());
    a.attn_saved = ops.attention_forward(q, kv, again);
  }
  Tensor dq = ops.empty(a.q.shape()), dkv = ops.empty(a.kv.shape());
  Tensor dq_heads = q_heads(dq), dkv_heads = kv_heads(dkv);
  ops.attention_backward(q_heads(dattn), q, kv, q_heads(a.attn), a.attn_saved, dq_heads, dkv_heads);
  if (ctx_.model.position == Position::rope) ops.rope_backward(dq_heads, dkv_heads, ctx_.model.rope_theta);
  const Tensor ln1 = gather_tokens(ctx_, a.ln1.y);  // (b, s, h) again for dWq, dWkv
  Tensor dln1 = reduce_tokens_of(ctx_, ln1.shape(), [&](std::int64_t row, std::int64_t n, Tensor& out) {
    const Tensor in = token_rows(ln1, row, n);
    ops.linear_backward(token_rows(dq, row, n), in, q_w_->value, out, none, none);
    Tensor from_kv = ops.empty(out.shape());
    ops.linear_backward(token_rows(dkv, row, n), in, kv_w_->value, from_kv, none, none);
    ops.add(out, from_kv, out);
  });  // f's conjugate (it also sums a shared kv head's parts: each rank's dkv is its query heads' part)
  Tensor dw_q = weight_grad_target(*q_w_, dq, ln1, later), dq_b = grad_of(q_b_);
  ops.linear_backward(dq, ln1, q_w_->value, none, dw_q, dq_b);
  const bool shared = kv_shared(ctx_);
  ParamList kv_params{kv_w_.get()};
  if (kv_b_) kv_params.push_back(kv_b_.get());
  if (shared) begin_shared_kv_grads(ctx_, kv_params);
  // A shared head's gradient is summed right away, so it is not deferred.
  Tensor dw_kv = weight_grad_target(*kv_w_, dkv, ln1, shared ? nullptr : later), dkv_b = grad_of(kv_b_);
  ops.linear_backward(dkv, ln1, kv_w_->value, none, dw_kv, dkv_b);
  if (shared) sum_shared_kv_grads(ctx_, kv_params);
  Tensor dx = norm_backward_tokens(ctx_, dln1, a.x, a.ln1, ln1_);
  ops.add(dx, dx2, dx);
  return dx;
}

}  // namespace ptdp
