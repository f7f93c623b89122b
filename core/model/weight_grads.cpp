// Deferred weight-gradient GEMMs (zero-bubble W).
#include "core/model/weight_grads.h"

namespace ptdp {

void DeferredWeightGrads::run(Ops& ops, PartResidency* residency, int chunk) {
  for (std::size_t i = 0; i < gemms_.size(); ++i) {
    const Gemm& g = gemms_[i];
    const bool first = i == 0 || gemms_[i - 1].part != g.part;
    const bool last = i + 1 == gemms_.size() || gemms_[i + 1].part != g.part;
    if (residency != nullptr && first) residency->enter(chunk, g.part, PartPass::weight);
    Tensor no_dx, no_bias;  // B computed the input and bias gradients
    // The weight as its GEMM's (m, k) matrix (SwiGLU's (2, f/t, h) fc1 as (2f/t, h)).
    const Tensor& w = g.param->value;
    const Shape matrix{w.numel() / w.dim(-1), w.dim(-1)};
    Tensor dw = g.param->grad.view(matrix);
    ops.linear_backward(g.dy, g.x, w.view(matrix), no_dx, dw, no_bias);
    if (residency != nullptr && last) residency->leave(chunk, g.part, PartPass::weight);
  }
  gemms_.clear();
}

Tensor weight_grad_target(Param& param, const Tensor& dy, const Tensor& x, DeferredWeightGrads* later) {
  if (later == nullptr) return param.grad;  // shares the gradient's storage
  later->add(dy, x, param);
  return Tensor{};
}

}  // namespace ptdp
