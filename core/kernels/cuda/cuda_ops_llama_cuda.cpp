// CudaOps: the pieces of a Llama-style block besides attention (issue 19):
// RMSNorm (rmsnorm.cu), the fused SwiGLU (swiglu.cu) and rotary position
// embedding (rope.cu), dispatched on the compute type.
// Letters: n rows (tokens), h hidden, f the MLP width on this rank; b, s, a,
// g, d as attention_shape.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>
#include <string>

#include "core/kernels/cuda/attention_shape.h"
#include "core/kernels/cuda/cuda_ops.h"
#include "core/kernels/cuda/kernels.h"

namespace ptdp {

namespace {

void expect(bool ok, const char* op, const std::string& what) {
  if (!ok) throw std::invalid_argument(std::string("cuda ") + op + ": " + what);
}
template <class T> T* typed(const Tensor& t) { return static_cast<T*>(t.raw()); }

}  // namespace

void CudaOps::rmsnorm_forward(const Tensor& x, const Tensor& gamma, Tensor& y, Tensor& rstd) {
  const std::int64_t h = x.dim(-1), n = x.numel() / h;
  expect(gamma.numel() == h && y.numel() == x.numel() && rstd.numel() == n && rstd.dtype() == DType::f32,
         "rmsnorm_forward", "x, y (n, h), gamma (h), rstd (n) fp32 expected");
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::rmsnorm_forward(typed<T>(x), typed<T>(gamma), n, h, static_cast<float>(kLayerNormEps), typed<T>(y),
                          rstd.data<float>(), stream_);
  });
}

void CudaOps::rmsnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& rstd, Tensor& dx,
                               Tensor& dgamma) {
  const std::int64_t h = x.dim(-1), n = x.numel() / h;
  expect(dy.numel() == x.numel() && dx.numel() == x.numel() && gamma.numel() == h && rstd.numel() == n &&
             dgamma.numel() == h && dgamma.dtype() == DType::f32,
         "rmsnorm_backward", "dy, x, dx (n, h), gamma (h), rstd (n), dgamma (h) fp32 expected");
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::rmsnorm_backward(typed<T>(dy), typed<T>(x), typed<T>(gamma), rstd.data<float>(), n, h, typed<T>(dx),
                           dgamma.data<float>(), stream_);
  });
}

void CudaOps::swiglu_forward(const Tensor& pre, Tensor& y) {
  const std::int64_t f = y.dim(-1), n = y.numel() / f;
  expect(pre.dim(-1) == 2 * f && pre.numel() == 2 * y.numel(), "swiglu_forward", "pre (n, 2f) and y (n, f) expected");
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::swiglu_forward(typed<T>(pre), n, f, typed<T>(y), stream_);
  });
}

void CudaOps::swiglu_backward(const Tensor& dy, const Tensor& pre, Tensor& dpre) {
  const std::int64_t f = dy.dim(-1), n = dy.numel() / f;
  expect(pre.dim(-1) == 2 * f && pre.numel() == 2 * dy.numel() && dpre.numel() == pre.numel(), "swiglu_backward",
         "dy (n, f), pre and dpre (n, 2f) expected");
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::swiglu_backward(typed<T>(dy), typed<T>(pre), n, f, typed<T>(dpre), stream_);
  });
}

void CudaOps::rope_forward(Tensor& q, Tensor& kv, double theta) { rope(q, kv, theta, false); }
void CudaOps::rope_backward(Tensor& dq, Tensor& dkv, double theta) { rope(dq, dkv, theta, true); }

// Forward turns q and the k half of kv by +angle, backward dq and dk by −angle.
void CudaOps::rope(Tensor& q, Tensor& kv, double theta, bool backward) {
  const char* op = backward ? "rope_backward" : "rope_forward";
  const cuda::AttentionShape x = cuda::attention_shape(q, kv, op);
  expect(x.head_dim % 2 == 0, op, "the head dim must be even");
  with_type([&](auto tag) {
    using T = decltype(tag);
    if (backward) cuda::rope_backward(typed<T>(q), typed<T>(kv), x.b, x.s, x.a, x.g, x.head_dim, theta, stream_);
    else cuda::rope_forward(typed<T>(q), typed<T>(kv), x.b, x.s, x.a, x.g, x.head_dim, theta, stream_);
  });
}

}  // namespace ptdp
