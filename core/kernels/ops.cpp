// Backend-independent parts of Ops: default compositions a backend may fuse.
#include "core/kernels/ops.h"

#include <stdexcept>

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

void Ops::linear_gelu_backward(const Tensor& dy, const Tensor& gelu_out, const Tensor& pre, const Tensor& w,
                               Tensor& dpre, Tensor& dw, Tensor& dbias, Tensor& dbias_pre) {
  Tensor dgelu = empty(gelu_out.shape());
  linear_backward(dy, gelu_out, w, dgelu, dw, dbias);
  gelu_backward(dgelu, pre, dpre);
  if (dbias_pre.defined()) bias_backward(dpre, dbias_pre);
}

void Ops::bias_residual_add(const Tensor& y, const Tensor& bias, const Tensor& residual, Tensor& out) {
  // (y + bias) + residual in that order, as bias_add then add.
  if (out.raw() != y.raw()) {
    Tensor sum = out.raw() == residual.raw() ? empty(y.shape(), y.dtype()) : out;
    copy(y, sum);
    bias_add(sum, bias);
    add(sum, residual, out);
    return;
  }
  bias_add(out, bias);
  add(out, residual, out);
}

void Ops::bias_residual_layernorm(const Tensor& y, const Tensor& bias, const Tensor& residual, const Tensor& gamma,
                                  const Tensor& beta, Tensor& sum, Tensor& ln, Tensor& mean, Tensor& rstd) {
  bias_residual_add(y, bias, residual, sum);
  layernorm_forward(sum, gamma, beta, ln, mean, rstd);
}

void Ops::reset_marks(int count) { marks_.assign(static_cast<std::size_t>(count), {}); }

void Ops::record_mark(int k) { marks_.at(static_cast<std::size_t>(k)) = std::chrono::steady_clock::now(); }

double Ops::mark_seconds(int k) {
  return std::chrono::duration<double>(marks_.at(static_cast<std::size_t>(k)) - marks_.at(0)).count();
}

double Ops::sum_squares_multi(const std::vector<const Tensor*>& xs) {
  double sum = 0;
  for (const Tensor* x : xs) sum += sum_squares(*x);
  return sum;
}

namespace {
void expect_host_scalar(const Ops& ops, const Tensor& acc, const char* op) {
  if (ops.device() != Device::cpu)
    throw std::logic_error(std::string(op) + ": the " + ops.name() + " backend does not implement it");
  if (acc.dtype() != DType::f64 || acc.numel() != 1)
    throw std::logic_error(std::string(op) + ": expects a 1-element f64 tensor");
}
}  // namespace

void Ops::accumulate_sum(const Tensor& x, Tensor& acc) {
  expect_host_scalar(*this, acc, "accumulate_sum");
  if (x.dtype() != DType::f32) throw std::logic_error("accumulate_sum: expects fp32 values");
  const float* v = x.data<float>();
  double sum = *acc.data<double>();
  for (std::int64_t i = 0; i < x.numel(); ++i) sum += v[i];
  *acc.data<double>() = sum;
}

double Ops::read_f64(const Tensor& scalar) {
  expect_host_scalar(*this, scalar, "read_f64");
  return *scalar.data<double>();
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
