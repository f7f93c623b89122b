// The MLP half of a decoder layer, forward and backward (the layer's equations
// in transformer_layer.cpp): GeLU (its bias and activation fused where the
// backend can) or SwiGLU, whose first GEMM gives each token its [gate | up]
// (2f/t) row.
#include "core/model/token_split.h"
#include "core/model/transformer_layer.h"

namespace ptdp {

Tensor TransformerLayer::mlp_block(LayerActs& a) {
  Ops& ops = ctx_.ops;
  Tensor ln2 = gathered_tokens(ctx_, a.ln2.y);  // f: (b, s, h)
  const std::int64_t b = ln2.dim(0), s = ln2.dim(1), h = ln2.dim(2);
  const Tensor w1 = fc1_matrix();
  const bool swiglu = ctx_.model.activation == Activation::swiglu;
  a.fc1 = ops.empty({b, s, w1.dim(0)});
  a.act = ops.empty({b, s, fc2_w_->value.dim(1)});
  gather_tokens_then(ctx_, a.ln2.y, ln2, [&](std::int64_t row, std::int64_t n) {
    Tensor pre = token_rows(a.fc1, row, n), out = token_rows(a.act, row, n);
    if (!swiglu) return ops.linear_gelu_forward(token_rows(ln2, row, n), w1, value_of(fc1_b_), pre, out);
    ops.linear_forward(token_rows(ln2, row, n), w1, value_of(fc1_b_), pre);
    ops.swiglu_forward(pre, out);
  });
  // g: sum the partial products of the t shards, then + b + residual (fused when the backend can)
  Tensor y = reduce_tokens_of(ctx_, {b, s, h}, [&](std::int64_t row, std::int64_t n, Tensor& out) {
    ops.linear_forward(token_rows(a.act, row, n), fc2_w_->value, Tensor{}, out);
  });
  bias_residual_add(ops, y, value_of(fc2_b_), a.x2, y);
  return y;
}

// dy (b, s, h) -> gradient at x2 (b, s, h), including the residual path
// (both (b, s/t, h) under sequence parallelism). Each linear layer's data
// gradient runs beside its collective (block by block under tp_comm_overlap);
// its weight and bias gradients follow once over all n rows, as Megatron's.
Tensor TransformerLayer::mlp_backward(const Tensor& dy, LayerActs& a, DeferredWeightGrads* later) {
  Ops& ops = ctx_.ops;
  Tensor none;  // a gradient not computed by that call
  const Tensor w1 = fc1_matrix();
  const bool swiglu = ctx_.model.activation == Activation::swiglu;
  Tensor dy_full = gathered_tokens(ctx_, dy);  // conjugate of g's reduce-scatter
  Tensor dfc1 = ops.empty(a.fc1.shape());
  Tensor db1 = grad_of(fc1_b_);
  if (db1.defined()) db1 = db1.view({db1.numel()});  // SwiGLU's (2, f/t) as its (2f/t) GEMM columns
  gather_tokens_then(ctx_, dy, dy_full, [&](std::int64_t row, std::int64_t n) {
    Tensor dfc1_rows = token_rows(dfc1, row, n);
    const Tensor dy_rows = token_rows(dy_full, row, n), act = token_rows(a.act, row, n);
    if (!swiglu)
      return ops.linear_gelu_backward(dy_rows, act, token_rows(a.fc1, row, n), fc2_w_->value, dfc1_rows, none, none,
                                      db1);
    Tensor dact = ops.empty(act.shape());
    ops.linear_backward(dy_rows, act, fc2_w_->value, dact, none, none);
    ops.swiglu_backward(dact, token_rows(a.fc1, row, n), dfc1_rows);
  });
  if (swiglu && db1.defined()) ops.bias_backward(dfc1, db1);
  // fc2's bias gradient: Σ rows of the full dy (the same on every tensor-parallel
  // rank, so the row-parallel bias needs no reduction).
  Tensor dw2 = weight_grad_target(*fc2_w_, dy_full, a.act, later), db2 = grad_of(fc2_b_);
  ops.linear_backward(dy_full, a.act, fc2_w_->value, none, dw2, db2);
  const Tensor ln2 = gather_tokens(ctx_, a.ln2.y);  // (b, s, h) again for dw1
  // f's conjugate: each shard saw all of ln2
  Tensor dln2 = reduce_tokens_of(ctx_, ln2.shape(), [&](std::int64_t row, std::int64_t n, Tensor& out) {
    ops.linear_backward(token_rows(dfc1, row, n), token_rows(ln2, row, n), w1, out, none, none);
  });
  Tensor dw1 = weight_grad_target(*fc1_w_, dfc1, ln2, later);
  if (dw1.defined()) dw1 = dw1.view(w1.shape());
  ops.linear_backward(dfc1, ln2, w1, none, dw1, none);  // fc1's bias gradient came with dfc1
  Tensor dx2 = norm_backward_tokens(ctx_, dln2, a.x2, a.ln2, ln2_);
  ops.add(dx2, dy, dx2);
  return dx2;
}

}  // namespace ptdp
