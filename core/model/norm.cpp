// Layernorm and RMSNorm layers; see norm.h.
#include "core/model/norm.h"

namespace ptdp {

NormParams::NormParams(ModelContext& ctx, const std::string& prefix) {
  const std::int64_t h = ctx.model.hidden;
  gamma = make_param(ctx.ops, prefix + "weight", {h}, {}, Init::ones, 0, ctx.seed(), false);
  if (ctx.model.norm == Norm::layernorm)
    beta = make_param(ctx.ops, prefix + "bias", {h}, {}, Init::zeros, 0, ctx.seed(), false);
  // Identical gradients on every tensor-parallel rank: rank 0's copy counts.
  gamma->count_in_norm = ctx.tp_rank() == 0;
  if (beta) beta->count_in_norm = gamma->count_in_norm;
}

void NormParams::append_to(ParamList& list) const {
  list.push_back(gamma.get());
  if (beta) list.push_back(beta.get());
}

namespace {

NormActs empty_norm_acts(Ops& ops, const Tensor& x, bool with_mean) {
  const std::int64_t n = x.numel() / x.dim(-1);
  return {ops.empty(x.shape()), with_mean ? ops.empty({n}, DType::f32) : Tensor{}, ops.empty({n}, DType::f32)};
}

}  // namespace

NormActs norm_forward(Ops& ops, const Tensor& x, const NormParams& norm) {
  NormActs a = empty_norm_acts(ops, x, norm.beta != nullptr);
  if (norm.beta)
    ops.layernorm_forward(x, norm.gamma->value, norm.beta->value, a.y, a.mean, a.rstd);
  else
    ops.rmsnorm_forward(x, norm.gamma->value, a.y, a.rstd);
  return a;
}

void bias_residual_add(Ops& ops, const Tensor& y, const Tensor& bias, const Tensor& residual, Tensor& out) {
  if (bias.defined())
    ops.bias_residual_add(y, bias, residual, out);
  else
    ops.add(y, residual, out);
}

NormActs residual_norm_forward(Ops& ops, const Tensor& y, const Tensor& bias, const Tensor& residual,
                               const NormParams& norm, Tensor& sum) {
  if (!norm.beta || !bias.defined()) {
    bias_residual_add(ops, y, bias, residual, sum);
    return norm_forward(ops, sum, norm);
  }
  NormActs a = empty_norm_acts(ops, y, true);
  ops.bias_residual_layernorm(y, bias, residual, norm.gamma->value, norm.beta->value, sum, a.y, a.mean, a.rstd);
  return a;
}

Tensor norm_backward(Ops& ops, const Tensor& dy, const Tensor& x, const NormActs& a, NormParams& norm) {
  Tensor dx = ops.empty(x.shape());
  if (norm.beta)
    ops.layernorm_backward(dy.view(x.shape()), x, norm.gamma->value, a.mean, a.rstd, dx, norm.gamma->grad,
                           norm.beta->grad);
  else
    ops.rmsnorm_backward(dy.view(x.shape()), x, norm.gamma->value, a.rstd, dx, norm.gamma->grad);
  return dx;
}

}  // namespace ptdp
