// CudaOps: linear layers through cuBLASLt (bias epilogue, fp32 weight-gradient
// accumulation) and bias+GeLU. Letters: n tokens, k in, m out.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>

#include "core/kernels/cuda/cuda_ops.h"
#include "core/kernels/cuda/gemm.h"
#include "core/kernels/cuda/kernels.h"

namespace ptdp {

namespace {

std::int64_t rows(const Tensor& t) { return t.numel() / t.dim(-1); }
template <class T> T* typed(const Tensor& t) { return static_cast<T*>(t.raw()); }
template <class T> cuda::ElemType elem() {
  return std::is_same_v<T, __nv_bfloat16> ? cuda::ElemType::bf16 : cuda::ElemType::f16;
}

}  // namespace

void CudaOps::linear_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::GemmArgs g;  // y (n, m) = x (n, k) · w (m, k)ᵀ (+ bias)
    g.trans_b = true, g.m = rows(x), g.n = w.dim(0), g.k = w.dim(1);
    g.a = x.raw(), g.lda = g.k, g.b = w.raw(), g.ldb = g.k, g.c = y.raw(), g.ldc = g.n;
    g.ab = g.c_type = elem<T>();
    g.bias = bias.defined() ? bias.raw() : nullptr;
    gemm_->run(g);
  });
}

void CudaOps::linear_backward(const Tensor& dy, const Tensor& x, const Tensor& w, Tensor& dx, Tensor& dw,
                              Tensor& dbias) {
  const std::int64_t n = rows(x), k = w.dim(1), m = w.dim(0);
  with_type([&](auto tag) {
    using T = decltype(tag);
    if (dx.defined()) {  // dx (n, k) = dy (n, m) · w (m, k)
      cuda::GemmArgs g;
      g.m = n, g.n = k, g.k = m, g.a = dy.raw(), g.lda = m, g.b = w.raw(), g.ldb = k, g.c = dx.raw(), g.ldc = k;
      g.ab = g.c_type = elem<T>();
      gemm_->run(g);
    }
    cuda::GemmArgs g;  // dw (m, k) += dyᵀ (m, n) · x (n, k), accumulated in fp32
    g.trans_a = true, g.m = m, g.n = k, g.k = n, g.a = dy.raw(), g.lda = m, g.b = x.raw(), g.ldb = k;
    g.c = dw.raw(), g.ldc = k, g.ab = elem<T>(), g.c_type = cuda::ElemType::f32, g.beta = 1;
    gemm_->run(g);
    if (dbias.defined()) cuda::bias_backward(typed<T>(dy), n, m, dbias.data<float>(), stream_);
  });
}

void CudaOps::linear_gelu_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& pre, Tensor& y) {
  if (!options_.fused_ops) return Ops::linear_gelu_forward(x, w, bias, pre, y);  // GEMM with bias, then GeLU
  linear_forward(x, w, Tensor{}, pre);
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::bias_gelu_forward(typed<T>(pre), typed<T>(bias), rows(pre), pre.dim(-1), typed<T>(y), stream_);
  });
}

}  // namespace ptdp
