// The recording Ops (see recording_ops.h): each layer call is recorded with
// its sizes and a closure holding its tensors, then run on the inner backend.
// Letters: rows = the tokens a call spans (n, or n/t of a sequence-parallel
// tensor), h hidden, m and k a linear's output and input widths.
#include "core/model/recording_ops.h"

#include <algorithm>
#include <initializer_list>
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

// `again` with the bytes of `tensors`, each once (an in-place or aliased one counts once).
RecordingOps::Run run(std::initializer_list<const Tensor*> tensors, std::function<void()> again) {
  std::vector<const void*> seen;
  double bytes = 0;
  for (const Tensor* t : tensors) {
    if (!t->defined() || std::find(seen.begin(), seen.end(), t->raw()) != seen.end()) continue;
    seen.push_back(t->raw());
    bytes += static_cast<double>(t->bytes());
  }
  return {std::move(again), bytes};
}

}  // namespace

std::vector<RecordingOps::Call> RecordingOps::take_calls() { return std::exchange(calls_, {}); }

void RecordingOps::record(OpKind kind, std::vector<std::int64_t> sizes, Run whole, Run gemm, Run elementwise) {
  calls_.push_back({kind, std::move(sizes), std::move(whole), std::move(gemm), std::move(elementwise)});
}

void RecordingOps::refuse(const char* call) {
  throw std::logic_error(std::string("RecordingOps: a layer called Ops::") + call +
                         ", which has no op kind (core/layer_ops/op_kind.h) to record it by");
}

void RecordingOps::layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y, Tensor& mean,
                                     Tensor& rstd) {
  record(OpKind::layernorm_forward, row_sizes(x),
         run({&x, &gamma, &beta, &y, &mean, &rstd}, [&o = inner_, x, gamma, beta, y, mean, rstd]() mutable {
           o.layernorm_forward(x, gamma, beta, y, mean, rstd);
         }));
  inner_.layernorm_forward(x, gamma, beta, y, mean, rstd);
}

void RecordingOps::layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                      const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  record(OpKind::layernorm_backward, row_sizes(x),
         run({&dy, &x, &gamma, &mean, &rstd, &dx, &dgamma, &dbeta},
             [&o = inner_, dy, x, gamma, mean, rstd, dx, dgamma, dbeta]() mutable {
               o.layernorm_backward(dy, x, gamma, mean, rstd, dx, dgamma, dbeta);
             }));
  inner_.layernorm_backward(dy, x, gamma, mean, rstd, dx, dgamma, dbeta);
}

// y (rows, m) = x (rows, k) · w (m, k)ᵀ.
void RecordingOps::linear_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) {
  record(OpKind::linear_forward, {rows_of(x), w.dim(0), w.dim(1)},
         run({&x, &w, &bias, &y}, [&o = inner_, x, w, bias, y]() mutable { o.linear_forward(x, w, bias, y); }));
  inner_.linear_forward(x, w, bias, y);
}

// One call may hold a data gradient dx (rows, k) = dy · w and a weight gradient
// dw (m, k) += dyᵀ · x: a record each; a call with only dbias is a bias gradient.
void RecordingOps::linear_backward(const Tensor& dy, const Tensor& x, const Tensor& w, Tensor& dx, Tensor& dw,
                                   Tensor& dbias) {
  const std::int64_t rows = rows_of(dy), m = w.dim(0), k = w.dim(1);
  if (dx.defined())
    record(OpKind::linear_data_grad, {rows, k, m},
           run({&dy, &w, &dx}, [&o = inner_, dy, x, w, dx, dbias, weights = dw.defined()]() mutable {
             Tensor none, bias = weights ? Tensor{} : dbias;
             o.linear_backward(dy, x, w, dx, none, bias);
           }));
  if (dw.defined())
    record(OpKind::linear_weight_grad, {m, k, rows},
           run({&dy, &x, &dw, &dbias}, [&o = inner_, dy, x, w, dw, dbias]() mutable {
             Tensor none;
             o.linear_backward(dy, x, w, none, dw, dbias);
           }));
  if (!dx.defined() && !dw.defined() && dbias.defined())
    record(OpKind::bias_backward, {rows, m},
           run({&dy, &dbias}, [&o = inner_, dy, dbias]() mutable { o.bias_backward(dy, dbias); }));
  inner_.linear_backward(dy, x, w, dx, dw, dbias);
}

void RecordingOps::bias_backward(const Tensor& dy, Tensor& dbias) {
  record(OpKind::bias_backward, row_sizes(dy),
         run({&dy, &dbias}, [&o = inner_, dy, dbias]() mutable { o.bias_backward(dy, dbias); }));
  inner_.bias_backward(dy, dbias);
}

// pre (rows, f) = x (rows, h) · w (f, h)ᵀ + bias, y = gelu(pre): the GEMM, and GeLU alone.
void RecordingOps::linear_gelu_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& pre, Tensor& y) {
  record(OpKind::linear_gelu_forward, {rows_of(x), w.dim(0), w.dim(1)},
         run({&x, &w, &bias, &pre, &y},
             [&o = inner_, x, w, bias, pre, y]() mutable { o.linear_gelu_forward(x, w, bias, pre, y); }),
         run({&x, &w, &pre}, [&o = inner_, x, w, pre]() mutable { o.linear_forward(x, w, Tensor{}, pre); }),
         run({&pre, &y}, [&o = inner_, pre, y]() mutable { o.gelu_forward(pre, y); }));
  inner_.linear_gelu_forward(x, w, bias, pre, y);
}

// Its GEMM: dpre (rows, f) = dy (rows, h) · w (h, f), fc2's data gradient; its
// element-wise work: GeLU's gradient at pre (rows, f), from a (rows, f) gradient.
void RecordingOps::linear_gelu_backward(const Tensor& dy, const Tensor& gelu_out, const Tensor& pre, const Tensor& w,
                                        Tensor& dpre, Tensor& dw, Tensor& dbias, Tensor& dbias_pre) {
  const Tensor dgelu = inner_.empty(pre.shape());  // the gradient GeLU's alone starts from
  record(OpKind::linear_gelu_backward, {rows_of(dy), w.dim(1), w.dim(0)},
         run({&dy, &gelu_out, &pre, &w, &dpre, &dw, &dbias, &dbias_pre},
             [&o = inner_, dy, gelu_out, pre, w, dpre, dw, dbias, dbias_pre]() mutable {
               o.linear_gelu_backward(dy, gelu_out, pre, w, dpre, dw, dbias, dbias_pre);
             }),
         run({&dy, &w, &dpre},
             [&o = inner_, dy, gelu_out, w, dpre]() mutable {
               Tensor none;
               o.linear_backward(dy, gelu_out, w, dpre, none, none);
             }),
         run({&dgelu, &pre, &dpre}, [&o = inner_, dgelu, pre, dpre]() mutable { o.gelu_backward(dgelu, pre, dpre); }));
  inner_.linear_gelu_backward(dy, gelu_out, pre, w, dpre, dw, dbias, dbias_pre);
}

void RecordingOps::gelu_forward(const Tensor& x, Tensor& y) {
  record(OpKind::gelu_forward, row_sizes(x), run({&x, &y}, [&o = inner_, x, y]() mutable { o.gelu_forward(x, y); }));
  inner_.gelu_forward(x, y);
}

void RecordingOps::gelu_backward(const Tensor& dy, const Tensor& x, Tensor& dx) {
  record(OpKind::gelu_backward, row_sizes(x),
         run({&dy, &x, &dx}, [&o = inner_, dy, x, dx]() mutable { o.gelu_backward(dy, x, dx); }));
  inner_.gelu_backward(dy, x, dx);
}

// tokens (b, s), wte (Vt, h) rows, out (b, s, h).
void RecordingOps::embedding_forward(const Tensor& tokens, const Tensor& wte, std::int64_t vocab_start, Tensor& out) {
  record(OpKind::embedding_forward, {tokens.dim(0), tokens.dim(1), wte.dim(1), wte.dim(0)},
         run({&tokens, &out}, [&o = inner_, tokens, wte, vocab_start, out]() mutable {
           o.embedding_forward(tokens, wte, vocab_start, out);
         }));
  inner_.embedding_forward(tokens, wte, vocab_start, out);
}

void RecordingOps::embedding_backward(const Tensor& tokens, const Tensor& dout, std::int64_t vocab_start,
                                      Tensor& dwte) {
  record(OpKind::embedding_backward, {tokens.dim(0), tokens.dim(1), dwte.dim(1), dwte.dim(0)},
         run({&tokens, &dout}, [&o = inner_, tokens, dout, vocab_start, dwte]() mutable {
           o.embedding_backward(tokens, dout, vocab_start, dwte);
         }));
  inner_.embedding_backward(tokens, dout, vocab_start, dwte);
}

void RecordingOps::add(const Tensor& a, const Tensor& b, Tensor& out) {
  record(OpKind::add, row_sizes(a), run({&a, &b, &out}, [&o = inner_, a, b, out]() mutable { o.add(a, b, out); }));
  inner_.add(a, b, out);
}

void RecordingOps::bias_residual_add(const Tensor& y, const Tensor& bias, const Tensor& residual, Tensor& out) {
  record(OpKind::bias_residual_add, row_sizes(y),
         run({&y, &bias, &residual, &out},
             [&o = inner_, y, bias, residual, out]() mutable { o.bias_residual_add(y, bias, residual, out); }));
  inner_.bias_residual_add(y, bias, residual, out);
}

void RecordingOps::bias_residual_layernorm(const Tensor& y, const Tensor& bias, const Tensor& residual,
                                           const Tensor& gamma, const Tensor& beta, Tensor& sum, Tensor& ln,
                                           Tensor& mean, Tensor& rstd) {
  record(OpKind::bias_residual_layernorm, row_sizes(y),
         run({&y, &bias, &residual, &gamma, &beta, &sum, &ln, &mean, &rstd},
             [&o = inner_, y, bias, residual, gamma, beta, sum, ln, mean, rstd]() mutable {
               o.bias_residual_layernorm(y, bias, residual, gamma, beta, sum, ln, mean, rstd);
             }));
  inner_.bias_residual_layernorm(y, bias, residual, gamma, beta, sum, ln, mean, rstd);
}

Tensor RecordingOps::attention_forward(const Tensor& q, const Tensor& kv, Tensor& out) {
  record(OpKind::attention_forward, head_sizes_of(q, kv),
         run({&q, &kv, &out}, [&o = inner_, q, kv, out]() mutable { o.attention_forward(q, kv, out); }));
  return inner_.attention_forward(q, kv, out);
}

void RecordingOps::attention_backward(const Tensor& dout, const Tensor& q, const Tensor& kv, const Tensor& out,
                                      const Tensor& saved, Tensor& dq, Tensor& dkv) {
  record(OpKind::attention_backward, head_sizes_of(q, kv),
         run({&dout, &q, &kv, &out, &saved, &dq, &dkv}, [&o = inner_, dout, q, kv, out, saved, dq, dkv]() mutable {
           o.attention_backward(dout, q, kv, out, saved, dq, dkv);
         }));
  inner_.attention_backward(dout, q, kv, out, saved, dq, dkv);
}

void RecordingOps::rmsnorm_forward(const Tensor& x, const Tensor& gamma, Tensor& y, Tensor& rstd) {
  record(OpKind::rmsnorm_forward, row_sizes(x),
         run({&x, &gamma, &y, &rstd},
             [&o = inner_, x, gamma, y, rstd]() mutable { o.rmsnorm_forward(x, gamma, y, rstd); }));
  inner_.rmsnorm_forward(x, gamma, y, rstd);
}

void RecordingOps::rmsnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& rstd,
                                    Tensor& dx, Tensor& dgamma) {
  record(OpKind::rmsnorm_backward, row_sizes(x),
         run({&dy, &x, &gamma, &rstd, &dx, &dgamma}, [&o = inner_, dy, x, gamma, rstd, dx, dgamma]() mutable {
           o.rmsnorm_backward(dy, x, gamma, rstd, dx, dgamma);
         }));
  inner_.rmsnorm_backward(dy, x, gamma, rstd, dx, dgamma);
}

// (rows, f): the output's width; pre holds [gate | up], 2f.
void RecordingOps::swiglu_forward(const Tensor& pre, Tensor& y) {
  record(OpKind::swiglu_forward, row_sizes(y),
         run({&pre, &y}, [&o = inner_, pre, y]() mutable { o.swiglu_forward(pre, y); }));
  inner_.swiglu_forward(pre, y);
}

void RecordingOps::swiglu_backward(const Tensor& dy, const Tensor& pre, Tensor& dpre) {
  record(OpKind::swiglu_backward, row_sizes(dy),
         run({&dy, &pre, &dpre}, [&o = inner_, dy, pre, dpre]() mutable { o.swiglu_backward(dy, pre, dpre); }));
  inner_.swiglu_backward(dy, pre, dpre);
}

void RecordingOps::rope_forward(Tensor& q, Tensor& kv, double theta) {
  record(OpKind::rope_forward, head_sizes_of(q, kv),
         run({&q, &kv}, [&o = inner_, q, kv, theta]() mutable { o.rope_forward(q, kv, theta); }));
  inner_.rope_forward(q, kv, theta);
}

void RecordingOps::rope_backward(Tensor& dq, Tensor& dkv, double theta) {
  record(OpKind::rope_backward, head_sizes_of(dq, dkv),
         run({&dq, &dkv}, [&o = inner_, dq, dkv, theta]() mutable { o.rope_backward(dq, dkv, theta); }));
  inner_.rope_backward(dq, dkv, theta);
}

}  // namespace ptdp
