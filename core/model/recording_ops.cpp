// The recording Ops (see recording_ops.h): each layer call is recorded with
// its sizes and a closure holding its tensors, then run on the inner backend.
// Letters: rows = the tokens a call spans (n, or n/t of a sequence-parallel
// tensor), h hidden, m and k a linear's output and input widths.
#include "core/model/recording_ops.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace ptdp {

namespace {

std::int64_t rows_of(const Tensor& x) { return x.numel() / x.dim(-1); }
// Element-wise sizes of x viewed as (rows, its last dim).
std::vector<std::int64_t> row_sizes(const Tensor& x) { return {rows_of(x), x.dim(-1)}; }
// q (b, s, a, d) and kv (b, s, g, 2, d).
std::vector<std::int64_t> head_sizes_of(const Tensor& q, const Tensor& kv) {
  return {q.dim(0), q.dim(1), q.dim(2), q.dim(3), kv.dim(2)};
}

}  // namespace

std::vector<RecordingOps::Call> RecordingOps::take_calls() { return std::exchange(calls_, {}); }

void RecordingOps::record(OpKind kind, std::vector<std::int64_t> sizes, std::function<void()> again,
                          std::function<void()> gemm_again) {
  calls_.push_back({kind, std::move(sizes), std::move(again), std::move(gemm_again)});
}

void RecordingOps::refuse(const char* call) {
  throw std::logic_error(std::string("RecordingOps: a layer called Ops::") + call +
                         ", which has no op kind (core/model/op_kind.h) to record it by");
}

void RecordingOps::layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                     Tensor& mean, Tensor& rstd) {
  record(OpKind::layernorm_forward, row_sizes(x), [&o = inner_, x, gamma, beta, y, mean, rstd]() mutable {
    o.layernorm_forward(x, gamma, beta, y, mean, rstd);
  });
  inner_.layernorm_forward(x, gamma, beta, y, mean, rstd);
}

void RecordingOps::layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                      const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  record(OpKind::layernorm_backward, row_sizes(x), [&o = inner_, dy, x, gamma, mean, rstd, dx, dgamma, dbeta]() mutable {
    o.layernorm_backward(dy, x, gamma, mean, rstd, dx, dgamma, dbeta);
  });
  inner_.layernorm_backward(dy, x, gamma, mean, rstd, dx, dgamma, dbeta);
}

// y (rows, m) = x (rows, k) · w (m, k)ᵀ.
void RecordingOps::linear_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) {
  record(OpKind::linear_forward, {rows_of(x), w.dim(0), w.dim(1)},
         [&o = inner_, x, w, bias, y]() mutable { o.linear_forward(x, w, bias, y); });
  inner_.linear_forward(x, w, bias, y);
}

// One call may hold a data gradient dx (rows, k) = dy · w and a weight gradient
// dw (m, k) += dyᵀ · x: a record each; a call with only dbias is a bias gradient.
void RecordingOps::linear_backward(const Tensor& dy, const Tensor& x, const Tensor& w, Tensor& dx, Tensor& dw,
                                   Tensor& dbias) {
  const std::int64_t rows = rows_of(dy), m = w.dim(0), k = w.dim(1);
  if (dx.defined())
    record(OpKind::linear_data_grad, {rows, k, m}, [&o = inner_, dy, x, w, dx, dbias, weights = dw.defined()]() mutable {
      Tensor none, bias = weights ? Tensor{} : dbias;
      o.linear_backward(dy, x, w, dx, none, bias);
    });
  if (dw.defined())
    record(OpKind::linear_weight_grad, {m, k, rows}, [&o = inner_, dy, x, w, dw, dbias]() mutable {
      Tensor none;
      o.linear_backward(dy, x, w, none, dw, dbias);
    });
  if (!dx.defined() && !dw.defined() && dbias.defined())
    record(OpKind::bias_backward, {rows, m}, [&o = inner_, dy, dbias]() mutable { o.bias_backward(dy, dbias); });
  inner_.linear_backward(dy, x, w, dx, dw, dbias);
}

void RecordingOps::bias_backward(const Tensor& dy, Tensor& dbias) {
  record(OpKind::bias_backward, row_sizes(dy), [&o = inner_, dy, dbias]() mutable { o.bias_backward(dy, dbias); });
  inner_.bias_backward(dy, dbias);
}

// pre (rows, f) = x (rows, h) · w (f, h)ᵀ + bias, y = gelu(pre).
void RecordingOps::linear_gelu_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& pre, Tensor& y) {
  record(
      OpKind::linear_gelu_forward, {rows_of(x), w.dim(0), w.dim(1)},
      [&o = inner_, x, w, bias, pre, y]() mutable { o.linear_gelu_forward(x, w, bias, pre, y); },
      [&o = inner_, x, w, pre]() mutable { o.linear_forward(x, w, Tensor{}, pre); });
  inner_.linear_gelu_forward(x, w, bias, pre, y);
}

// Its GEMM: dpre (rows, f) = dy (rows, h) · w (h, f), fc2's data gradient.
void RecordingOps::linear_gelu_backward(const Tensor& dy, const Tensor& gelu_out, const Tensor& pre, const Tensor& w,
                                        Tensor& dpre, Tensor& dw, Tensor& dbias, Tensor& dbias_pre) {
  record(
      OpKind::linear_gelu_backward, {rows_of(dy), w.dim(1), w.dim(0)},
      [&o = inner_, dy, gelu_out, pre, w, dpre, dw, dbias, dbias_pre]() mutable {
        o.linear_gelu_backward(dy, gelu_out, pre, w, dpre, dw, dbias, dbias_pre);
      },
      [&o = inner_, dy, gelu_out, w, dpre]() mutable {
        Tensor none;
        o.linear_backward(dy, gelu_out, w, dpre, none, none);
      });
  inner_.linear_gelu_backward(dy, gelu_out, pre, w, dpre, dw, dbias, dbias_pre);
}

void RecordingOps::add(const Tensor& a, const Tensor& b, Tensor& out) {
  record(OpKind::add, row_sizes(a), [&o = inner_, a, b, out]() mutable { o.add(a, b, out); });
  inner_.add(a, b, out);
}

void RecordingOps::bias_residual_add(const Tensor& y, const Tensor& bias, const Tensor& residual, Tensor& out) {
  record(OpKind::bias_residual_add, row_sizes(y),
         [&o = inner_, y, bias, residual, out]() mutable { o.bias_residual_add(y, bias, residual, out); });
  inner_.bias_residual_add(y, bias, residual, out);
}

void RecordingOps::bias_residual_layernorm(const Tensor& y, const Tensor& bias, const Tensor& residual,
                                           const Tensor& gamma, const Tensor& beta, Tensor& sum, Tensor& ln,
                                           Tensor& mean, Tensor& rstd) {
  record(OpKind::bias_residual_layernorm, row_sizes(y),
         [&o = inner_, y, bias, residual, gamma, beta, sum, ln, mean, rstd]() mutable {
           o.bias_residual_layernorm(y, bias, residual, gamma, beta, sum, ln, mean, rstd);
         });
  inner_.bias_residual_layernorm(y, bias, residual, gamma, beta, sum, ln, mean, rstd);
}

Tensor RecordingOps::attention_forward(const Tensor& q, const Tensor& kv, Tensor& out) {
  record(OpKind::attention_forward, head_sizes_of(q, kv),
         [&o = inner_, q, kv, out]() mutable { o.attention_forward(q, kv, out); });
  return inner_.attention_forward(q, kv, out);
}

void RecordingOps::attention_backward(const Tensor& dout, const Tensor& q, const Tensor& kv, const Tensor& out,
                                      const Tensor& saved, Tensor& dq, Tensor& dkv) {
  record(OpKind::attention_backward, head_sizes_of(q, kv), [&o = inner_, dout, q, kv, out, saved, dq, dkv]() mutable {
    o.attention_backward(dout, q, kv, out, saved, dq, dkv);
  });
  inner_.attention_backward(dout, q, kv, out, saved, dq, dkv);
}

void RecordingOps::rmsnorm_forward(const Tensor& x, const Tensor& gamma, Tensor& y, Tensor& rstd) {
  record(OpKind::rmsnorm_forward, row_sizes(x),
         [&o = inner_, x, gamma, y, rstd]() mutable { o.rmsnorm_forward(x, gamma, y, rstd); });
  inner_.rmsnorm_forward(x, gamma, y, rstd);
}

void RecordingOps::rmsnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& rstd,
                                    Tensor& dx, Tensor& dgamma) {
  record(OpKind::rmsnorm_backward, row_sizes(x), [&o = inner_, dy, x, gamma, rstd, dx, dgamma]() mutable {
    o.rmsnorm_backward(dy, x, gamma, rstd, dx, dgamma);
  });
  inner_.rmsnorm_backward(dy, x, gamma, rstd, dx, dgamma);
}

// (rows, f): the output's width; pre holds [gate | up], 2f.
void RecordingOps::swiglu_forward(const Tensor& pre, Tensor& y) {
  record(OpKind::swiglu_forward, row_sizes(y), [&o = inner_, pre, y]() mutable { o.swiglu_forward(pre, y); });
  inner_.swiglu_forward(pre, y);
}

void RecordingOps::swiglu_backward(const Tensor& dy, const Tensor& pre, Tensor& dpre) {
  record(OpKind::swiglu_backward, row_sizes(dy),
         [&o = inner_, dy, pre, dpre]() mutable { o.swiglu_backward(dy, pre, dpre); });
  inner_.swiglu_backward(dy, pre, dpre);
}

void RecordingOps::rope_forward(Tensor& q, Tensor& kv, double theta) {
  record(OpKind::rope_forward, head_sizes_of(q, kv), [&o = inner_, q, kv, theta]() mutable { o.rope_forward(q, kv, theta); });
  inner_.rope_forward(q, kv, theta);
}

void RecordingOps::rope_backward(Tensor& dq, Tensor& dkv, double theta) {
  record(OpKind::rope_backward, head_sizes_of(dq, dkv),
         [&o = inner_, dq, dkv, theta]() mutable { o.rope_backward(dq, dkv, theta); });
  inner_.rope_backward(dq, dkv, theta);
}

}  // namespace ptdp
