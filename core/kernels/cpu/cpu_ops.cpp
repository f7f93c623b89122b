// CpuOps: shape checks, then the kernels of core/kernels/cpu: the fp32 fast
// paths where one exists (attention on BLAS, vectorized rows), else the reference.
#include "core/kernels/cpu/cpu_ops.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "core/kernels/cpu/adamw_vector.h"
#include "core/kernels/cpu/attention_blas.h"
#include "core/kernels/cpu/cross_entropy.h"
#include "core/kernels/cpu/cross_entropy_vector.h"
#include "core/kernels/cpu/elementwise_vector.h"
#include "core/kernels/cpu/embedding.h"
#include "core/kernels/cpu/linear.h"
#include "core/kernels/cpu/rope.h"
#include "core/kernels/cpu/norm_vector.h"

namespace ptdp {

namespace {

void expect(bool ok, const char* op, const std::string& what) {
  if (!ok) throw std::logic_error(std::string("cpu ") + op + ": " + what);
}
float* f(const Tensor& t) { return t.data<float>(); }
const std::int32_t* ids(const Tensor& t) { return t.data<std::int32_t>(); }
float* opt(const Tensor& t) { return t.defined() ? t.data<float>() : nullptr; }
std::int64_t rows(const Tensor& t) { return t.numel() / t.dim(-1); }

// memcpy with a null pointer is undefined even for 0 bytes, and an empty
// tensor or std::vector may hand one over (UBSan's nonnull-attribute check).
void copy_bytes(void* to, const void* from, std::size_t n) {
  if (n > 0) std::memcpy(to, from, n);
}

}  // namespace

void CpuOps::zero(Tensor& x) {
  if (x.bytes() > 0) std::memset(x.raw(), 0, x.bytes());
}

void CpuOps::copy(const Tensor& src, Tensor& dst) {
  expect(src.bytes() == dst.bytes() && src.dtype() == dst.dtype(), "copy", "size or type differs");
  copy_bytes(dst.raw(), src.raw(), src.bytes());
}

void CpuOps::upload_f32(const float* host, Tensor& dst) { copy_bytes(f(dst), host, dst.bytes()); }
void CpuOps::download_f32(const Tensor& src, float* host) { copy_bytes(host, f(src), src.bytes()); }
void CpuOps::upload_i32(const std::int32_t* host, Tensor& dst) {
  copy_bytes(dst.data<std::int32_t>(), host, dst.bytes());
}
void CpuOps::cast(const Tensor& src, Tensor& dst) { copy(src, dst); }

void CpuOps::embedding_forward(const Tensor& tokens, const Tensor& wte, std::int64_t vocab_start,
                               Tensor& out) {
  const std::int64_t h = wte.dim(1);
  expect(out.numel() == tokens.numel() * h, "embedding_forward", "out is not (n, h)");
  cpu::embedding_forward(ids(tokens), tokens.numel(), f(wte), vocab_start, wte.dim(0), h, f(out));
}

void CpuOps::embedding_backward(const Tensor& tokens, const Tensor& dout, std::int64_t vocab_start,
                                Tensor& dwte) {
  cpu::embedding_backward(ids(tokens), tokens.numel(), f(dout), vocab_start, dwte.dim(0), dwte.dim(1),
                          f(dwte));
}

void CpuOps::position_forward(const Tensor& wpe, Tensor& x) {
  expect(x.rank() == 3 && wpe.dim(0) >= x.dim(1), "position_forward", "x is not (b, s, h) with s ≤ rows of wpe");
  cpu::position_forward(f(wpe), x.dim(0), x.dim(1), x.dim(2), f(x));
}

void CpuOps::position_backward(const Tensor& dx, Tensor& dwpe) {
  cpu::position_backward(f(dx), dx.dim(0), dx.dim(1), dx.dim(2), f(dwpe));
}

void CpuOps::layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                               Tensor& mean, Tensor& rstd) {
  expect(gamma.numel() == x.dim(-1), "layernorm_forward", "gamma is not (h)");
  cpu::layernorm_forward_vector(f(x), f(gamma), f(beta), rows(x), x.dim(-1), static_cast<float>(kLayerNormEps), f(y),
                         f(mean), f(rstd));
}

void CpuOps::layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                const Tensor& mean, const Tensor& rstd, Tensor& dx, Tensor& dgamma,
                                Tensor& dbeta) {
  cpu::layernorm_backward_vector(f(dy), f(x), f(gamma), f(mean), f(rstd), rows(x), x.dim(-1), f(dx), f(dgamma),
                          f(dbeta));
}

void CpuOps::linear_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) {
  const std::int64_t k = w.dim(1), m = w.dim(0);
  expect(x.dim(-1) == k && y.dim(-1) == m && rows(x) == rows(y), "linear_forward",
         "x " + shape_string(x.shape()) + ", w " + shape_string(w.shape()) + ", y " + shape_string(y.shape()));
  cpu::linear_forward(f(x), f(w), opt(bias), rows(x), k, m, f(y));
}

void CpuOps::linear_backward(const Tensor& dy, const Tensor& x, const Tensor& w, Tensor& dx, Tensor& dw,
                             Tensor& dbias) {
  cpu::linear_backward(f(dy), f(x), f(w), rows(x), w.dim(1), w.dim(0), opt(dx), opt(dw), opt(dbias));
}

void CpuOps::bias_add(Tensor& y, const Tensor& bias) { cpu::bias_add_vector(f(y), f(bias), rows(y), y.dim(-1)); }
void CpuOps::bias_backward(const Tensor& dy, Tensor& dbias) {
  cpu::bias_backward_vector(f(dy), rows(dy), dy.dim(-1), f(dbias));
}

void CpuOps::gelu_forward(const Tensor& x, Tensor& y) { cpu::gelu_forward_vector(f(x), x.numel(), f(y)); }
void CpuOps::gelu_backward(const Tensor& dy, const Tensor& x, Tensor& dx) {
  cpu::gelu_backward_vector(f(dy), f(x), x.numel(), f(dx));
}
void CpuOps::add(const Tensor& a, const Tensor& b, Tensor& out) {
  expect(a.numel() == b.numel() && a.numel() == out.numel(), "add", "sizes differ");
  cpu::add_vector(f(a), f(b), a.numel(), f(out));
}
void CpuOps::scale(Tensor& x, double alpha) { cpu::scale_vector(f(x), x.numel(), static_cast<float>(alpha)); }
double CpuOps::sum_squares(const Tensor& x) { return cpu::sum_squares_vector(f(x), x.numel()); }

// q (b, s, a, d), kv (b, s, g, 2, d) -> out (b, s, a, d); returns probs (b, a, s, s).
Tensor CpuOps::attention_forward(const Tensor& q, const Tensor& kv, Tensor& out) {
  expect(q.rank() == 4 && kv.rank() == 5 && kv.dim(3) == 2 && kv.dim(4) == q.dim(3) && kv.dim(1) == q.dim(1) &&
             q.dim(2) % kv.dim(2) == 0 && out.numel() == q.numel(),
         "attention_forward", "q " + shape_string(q.shape()) + ", kv " + shape_string(kv.shape()));
  const std::int64_t b = q.dim(0), s = q.dim(1), a = q.dim(2), head_dim = q.dim(3);
  Tensor probs = empty({b, a, s, s}, DType::f32);
  cpu::attention_forward_blas(f(q), f(kv), b, s, a, kv.dim(2), head_dim, f(out), f(probs));
  return probs;
}

void CpuOps::attention_backward(const Tensor& dout, const Tensor& q, const Tensor& kv, const Tensor&,
                                const Tensor& saved, Tensor& dq, Tensor& dkv) {
  expect(dq.numel() == q.numel() && dkv.numel() == kv.numel(), "attention_backward", "dq or dkv size");
  cpu::attention_backward_blas(f(dout), f(q), f(kv), f(saved), q.dim(0), q.dim(1), q.dim(2), kv.dim(2),
                               q.dim(3), f(dq), f(dkv));
}

void CpuOps::rmsnorm_forward(const Tensor& x, const Tensor& gamma, Tensor& y, Tensor& rstd) {
  expect(gamma.numel() == x.dim(-1), "rmsnorm_forward", "gamma is not (h)");
  cpu::rmsnorm_forward_vector(f(x), f(gamma), rows(x), x.dim(-1), static_cast<float>(kLayerNormEps), f(y), f(rstd));
}

void CpuOps::rmsnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& rstd,
                              Tensor& dx, Tensor& dgamma) {
  cpu::rmsnorm_backward_vector(f(dy), f(x), f(gamma), f(rstd), rows(x), x.dim(-1), f(dx), f(dgamma));
}

void CpuOps::swiglu_forward(const Tensor& pre, Tensor& y) {
  expect(pre.dim(-1) == 2 * y.dim(-1) && rows(pre) == rows(y), "swiglu_forward", "pre is not (n, 2f)");
  cpu::swiglu_forward_vector(f(pre), rows(pre), y.dim(-1), f(y));
}

void CpuOps::swiglu_backward(const Tensor& dy, const Tensor& pre, Tensor& dpre) {
  cpu::swiglu_backward_vector(f(dy), f(pre), rows(pre), dy.dim(-1), f(dpre));
}

// q (b, s, a, d) and the k half of kv (b, s, g, 2, d).
void CpuOps::rope_forward(Tensor& q, Tensor& kv, double theta) {
  const std::int64_t b = q.dim(0), s = q.dim(1), head_dim = q.dim(3);
  cpu::rope_rotate(f(q), b, s, q.dim(2), head_dim, head_dim, theta, 1);
  cpu::rope_rotate(f(kv), b, s, kv.dim(2), 2 * head_dim, head_dim, theta, 1);
}

void CpuOps::rope_backward(Tensor& dq, Tensor& dkv, double theta) {
  const std::int64_t b = dq.dim(0), s = dq.dim(1), head_dim = dq.dim(3);
  cpu::rope_rotate(f(dq), b, s, dq.dim(2), head_dim, head_dim, theta, -1);
  cpu::rope_rotate(f(dkv), b, s, dkv.dim(2), 2 * head_dim, head_dim, theta, -1);
}

void CpuOps::ce_row_max(const Tensor& logits, Tensor& row_max) {
  cpu::ce_row_max_vector(f(logits), rows(logits), logits.dim(-1), f(row_max));
}
void CpuOps::ce_row_sum_exp(const Tensor& logits, const Tensor& row_max, Tensor& sum_exp) {
  cpu::ce_row_sum_exp_vector(f(logits), rows(logits), logits.dim(-1), f(row_max), f(sum_exp));
}
void CpuOps::ce_target_logit(const Tensor& logits, const Tensor& targets, std::int64_t vocab_start,
                             Tensor& target_logit) {
  cpu::ce_target_logit(f(logits), ids(targets), rows(logits), logits.dim(-1), vocab_start, f(target_logit));
}
void CpuOps::ce_loss(const Tensor& row_max, const Tensor& sum_exp, const Tensor& target_logit, Tensor& loss) {
  cpu::ce_loss(f(row_max), f(sum_exp), f(target_logit), row_max.numel(), f(loss));
}
void CpuOps::ce_backward(const Tensor& logits, const Tensor& targets, const Tensor& row_max,
                         const Tensor& sum_exp, std::int64_t vocab_start, double scale, Tensor& dlogits) {
  cpu::ce_backward_vector(f(logits), ids(targets), f(row_max), f(sum_exp), rows(logits), logits.dim(-1), vocab_start,
                   static_cast<float>(scale), f(dlogits));
}

void CpuOps::adamw_step(Tensor& master, const Tensor& grad, Tensor& m, Tensor& v, const AdamWParams& hp) {
  cpu::adamw_step_vector(f(master), f(grad), f(m), f(v), master.numel(), hp);
}

}  // namespace ptdp
