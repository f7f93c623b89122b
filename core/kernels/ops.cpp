// Backend-independent parts of Ops: default compositions a backend may fuse.
#include "core/kernels/ops.h"

namespace ptdp {

Tensor Ops::zeros(Shape shape, DType type) {
  Tensor t = empty(std::move(shape), type);
  zero(t);
  return t;
}

void Ops::init_param(Tensor& value, const ParamInit& how) {
  std::vector<float> host(static_cast<std::size_t>(value.numel()));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = init_element(how, static_cast<std::int64_t>(i));
  upload_f32(host.data(), value);
}

void Ops::linear_gelu_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& pre,
                              Tensor& y) {
  linear_forward(x, w, bias, pre);
  gelu_forward(pre, y);
}

void Ops::reset_marks(int count) { marks_.assign(static_cast<std::size_t>(count), {}); }

void Ops::record_mark(int k) { marks_.at(static_cast<std::size_t>(k)) = std::chrono::steady_clock::now(); }

double Ops::mark_seconds(int k) {
  return std::chrono::duration<double>(marks_.at(static_cast<std::size_t>(k)) - marks_.at(0)).count();
}

void Ops::adamw_multi(AdamWGroup& g, const AdamWParams& hp) {
  AdamWParams one = hp;
  for (std::size_t i = 0; i < g.masters.size(); ++i) {
    one.weight_decay = g.decay[i];
    adamw_step(*g.masters[i], *g.grads[i], *g.m[i], *g.v[i], one);
    if (g.weights[i] != nullptr && g.weights[i]->raw() != g.masters[i]->raw()) cast(*g.masters[i], *g.weights[i]);
  }
}

}  // namespace ptdp
