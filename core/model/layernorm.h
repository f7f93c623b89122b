// A layernorm application and what its backward needs; shared by the decoder
// layers and the output layer. Letters: n tokens, h hidden.
#pragma once
#include "core/kernels/ops.h"
#include "core/model/param.h"

namespace ptdp {

struct NormActs {
  Tensor y;     // (…, h) normalised output
  Tensor mean;  // (n) fp32
  Tensor rstd;  // (n) fp32
};

// Uninitialised y, mean, rstd for a layernorm of x.
inline NormActs empty_norm_acts(Ops& ops, const Tensor& x) {
  const std::int64_t n = x.numel() / x.dim(-1);
  return {ops.empty(x.shape()), ops.empty({n}, DType::f32), ops.empty({n}, DType::f32)};
}

inline NormActs layernorm_forward(Ops& ops, const Tensor& x, const Param& gamma, const Param& beta) {
  NormActs a = empty_norm_acts(ops, x);
  ops.layernorm_forward(x, gamma.value, beta.value, a.y, a.mean, a.rstd);
  return a;
}

// dx (shape of x) from dy; accumulates the gradients of gamma and beta.
inline Tensor layernorm_backward(Ops& ops, const Tensor& dy, const Tensor& x, const NormActs& a, Param& gamma,
                                 Param& beta) {
  Tensor dx = ops.empty(x.shape());
  ops.layernorm_backward(dy.view(x.shape()), x, gamma.value, a.mean, a.rstd, dx, gamma.grad, beta.grad);
  return dx;
}

}  // namespace ptdp
