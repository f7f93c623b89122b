// Backend-independent parts of Ops: default compositions a backend may fuse.
#include "core/kernels/ops.h"

namespace ptdp {

Tensor Ops::zeros(Shape shape, DType type) {
  Tensor t = empty(std::move(shape), type);
  zero(t);
  return t;
}

void Ops::linear_gelu_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& pre,
                              Tensor& y) {
  linear_forward(x, w, bias, pre);
  gelu_forward(pre, y);
}

}  // namespace ptdp
