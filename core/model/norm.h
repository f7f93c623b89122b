// A normalisation layer (layernorm or RMSNorm, Model::norm) and what its
// backward needs; shared by the decoder layers and the output layer.
// Letters: n tokens, h hidden.
#pragma once
#include <memory>
#include <string>

#include "core/kernels/ops.h"
#include "core/model/model_context.h"
#include "core/model/param.h"

namespace ptdp {

struct NormActs {
  Tensor y;     // (…, h) normalised output
  Tensor mean;  // (n) fp32; undefined under RMSNorm
  Tensor rstd;  // (n) fp32
};

// gamma (h) and, under layernorm, beta (h); replicated over the tensor-parallel
// group (only rank 0's copy counts in the gradient norm).
struct NormParams {
  std::unique_ptr<Param> gamma, beta;  // beta null under RMSNorm

  // `prefix` + "weight" and + "bias".
  NormParams(ModelContext& ctx, const std::string& prefix);
  void append_to(ParamList& list) const;
};

NormActs norm_forward(Ops& ops, const Tensor& x, const NormParams& norm);

// sum (n, h) = y + bias + residual (bias may be undefined; sum may alias y or
// residual), and its norm; one fused pass for a layernorm where the backend has it.
NormActs residual_norm_forward(Ops& ops, const Tensor& y, const Tensor& bias, const Tensor& residual,
                               const NormParams& norm, Tensor& sum);

// dx (shape of x) from dy; accumulates the gradients of gamma (and beta).
Tensor norm_backward(Ops& ops, const Tensor& dy, const Tensor& x, const NormActs& a, NormParams& norm);

// out (n, h) = y + bias + residual; no bias: y + residual.
void bias_residual_add(Ops& ops, const Tensor& y, const Tensor& bias, const Tensor& residual, Tensor& out);

// A parameter's value and gradient, undefined for an absent parameter (model.bias false).
inline Tensor value_of(const std::unique_ptr<Param>& p) { return p ? p->value : Tensor{}; }
inline Tensor grad_of(const std::unique_ptr<Param>& p) { return p ? p->grad : Tensor{}; }

}  // namespace ptdp
