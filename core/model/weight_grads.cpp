// Deferred weight-gradient GEMMs (zero-bubble W).
#include "core/model/weight_grads.h"

namespace ptdp {

void DeferredWeightGrads::run(Ops& ops) {
  for (Gemm& g : gemms_) {
    Tensor no_dx, no_bias;  // B computed the input and bias gradients
    ops.linear_backward(g.dy, g.x, g.param->value, no_dx, g.param->grad, no_bias);
  }
  gemms_.clear();
}

Tensor weight_grad_target(Param& param, const Tensor& dy, const Tensor& x, DeferredWeightGrads* later) {
  if (later == nullptr) return param.grad;  // shares the gradient's storage
  later->add(dy, x, param);
  return Tensor{};
}

}  // namespace ptdp
