// Causal mask + softmax over attention scores, CUDA (see kernels.h): the
// fused kernel (one block per row) and, beside it, the readable unfused
// variant of two kernels that each read and write memory (mask, then softmax)
// for the fused-operator experiment; and the backward. The 1/sqrt(d) scale is
// not here: the Q·Kᵀ GEMM applies it as its alpha (an unscaled fp16 score can
// overflow), as Megatron's baddbmm does. Letters: b micro-batch, a heads, s
// sequence. scores, probs, dprobs, dscores (b·a, s, s); row t of each (s, s)
// matrix attends to columns u ≤ t.
#include <cmath>
#include <cstdint>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/kernels.h"

namespace ptdp::cuda {
namespace {

using dev::from_float;
using dev::to_float;

struct SoftmaxConfig {
  static constexpr int kThreads = 256;        // row kernels: one block per score row, threads over columns
  static constexpr int kMaxRowBlocks = 4096;  // grid-stride over rows beyond this (enough to fill any GPU)
  static constexpr int kMaxBlocks = 4096;     // unfused mask: 1-D grid-stride
};
using Cfg = SoftmaxConfig;

// --- fused: probs row t = softmax(scores[t, 0..t]), zeros for u > t --------------------
// Each element is read and written by the same thread, writes come after the
// block reductions: probs may alias scores.
template <class T>
__global__ void causal_softmax_kernel(const T* scores, std::int64_t rows, std::int64_t s, T* probs) {
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const std::int64_t t = row % s;  // query position: columns 0..t are visible
    const T* in = scores + row * s;
    T* out = probs + row * s;
    float mx = -INFINITY;
    for (std::int64_t u = threadIdx.x; u <= t; u += Cfg::kThreads) mx = fmaxf(mx, to_float(in[u]));
    mx = dev::block_max<Cfg::kThreads>(mx);
    float sum = 0.0f;
    for (std::int64_t u = threadIdx.x; u <= t; u += Cfg::kThreads) sum += expf(to_float(in[u]) - mx);
    const float inv_sum = 1.0f / dev::block_sum<Cfg::kThreads>(sum);
    for (std::int64_t u = threadIdx.x; u < s; u += Cfg::kThreads)
      out[u] = from_float<T>(u <= t ? expf(to_float(in[u]) - mx) * inv_sum : 0.0f);
  }
}

// --- unfused, step 1: probs = scores with −inf above the diagonal (column u > row t) ----
// Element-wise, so probs may alias scores.
template <class T> __global__ void causal_mask_kernel(const T* scores, std::int64_t count, std::int64_t s, T* probs) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    probs[i] = i % s > (i / s) % s ? from_float<T>(-INFINITY) : scores[i];
}

// --- unfused, step 2: plain softmax of each full row, in place (exp(−inf) = 0) ----------
// Column 0 is never masked, so every row has a finite maximum.
template <class T> __global__ void softmax_rows_kernel(std::int64_t rows, std::int64_t s, T* x) {
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    T* xi = x + row * s;
    float mx = -INFINITY;
    for (std::int64_t u = threadIdx.x; u < s; u += Cfg::kThreads) mx = fmaxf(mx, to_float(xi[u]));
    mx = dev::block_max<Cfg::kThreads>(mx);
    float sum = 0.0f;
    for (std::int64_t u = threadIdx.x; u < s; u += Cfg::kThreads) sum += expf(to_float(xi[u]) - mx);
    const float inv_sum = 1.0f / dev::block_sum<Cfg::kThreads>(sum);
    for (std::int64_t u = threadIdx.x; u < s; u += Cfg::kThreads)
      xi[u] = from_float<T>(expf(to_float(xi[u]) - mx) * inv_sum);
  }
}

// --- backward: dscores[t, u] = p·(dp − Σ_{u' ≤ t} dp·p) for u ≤ t, 0 above ------------
// (equal to the full-row formula since the forward's probs are 0 above the
// diagonal). Same-thread read-then-write after the reduction: may alias dprobs.
template <class T>
__global__ void softmax_backward_kernel(const T* probs, const T* dprobs, std::int64_t rows, std::int64_t s,
                                        T* dscores) {
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const std::int64_t t = row % s;
    const T* p = probs + row * s;
    const T* dp = dprobs + row * s;
    T* ds = dscores + row * s;
    float dot = 0.0f;
    for (std::int64_t u = threadIdx.x; u <= t; u += Cfg::kThreads) dot += to_float(dp[u]) * to_float(p[u]);
    dot = dev::block_sum<Cfg::kThreads>(dot);
    for (std::int64_t u = threadIdx.x; u < s; u += Cfg::kThreads)
      ds[u] = from_float<T>(u <= t ? to_float(p[u]) * (to_float(dp[u]) - dot) : 0.0f);
  }
}

unsigned row_blocks(std::int64_t rows) { return dev::grid_blocks(rows, 1, Cfg::kMaxRowBlocks); }

}  // namespace

template <class T>
void causal_softmax(const T* scores, std::int64_t batch, std::int64_t s, T* probs, bool fused, cudaStream_t st) {
  const std::int64_t rows = batch * s;  // every score row of every (batch, head)
  if (rows <= 0) return;
  if (fused) {
    causal_softmax_kernel<<<row_blocks(rows), Cfg::kThreads, 0, st>>>(scores, rows, s, probs);
    PTDP_CUDA_CHECK_LAUNCH();
    return;
  }
  const std::int64_t count = rows * s;
  causal_mask_kernel<<<dev::grid_blocks(count, Cfg::kThreads, Cfg::kMaxBlocks), Cfg::kThreads, 0, st>>>(scores, count,
                                                                                                        s, probs);
  PTDP_CUDA_CHECK_LAUNCH();
  softmax_rows_kernel<<<row_blocks(rows), Cfg::kThreads, 0, st>>>(rows, s, probs);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void causal_softmax_backward(const T* probs, const T* dprobs, std::int64_t batch, std::int64_t s, T* dscores,
                             cudaStream_t st) {
  const std::int64_t rows = batch * s;
  if (rows <= 0) return;
  softmax_backward_kernel<<<row_blocks(rows), Cfg::kThreads, 0, st>>>(probs, dprobs, rows, s, dscores);
  PTDP_CUDA_CHECK_LAUNCH();
}

#define PTDP_INSTANTIATE(T)                                                                              \
  template void causal_softmax<T>(const T*, std::int64_t, std::int64_t, T*, bool, cudaStream_t);         \
  template void causal_softmax_backward<T>(const T*, const T*, std::int64_t, std::int64_t, T*, cudaStream_t);
PTDP_INSTANTIATE(__nv_bfloat16)
PTDP_INSTANTIATE(__half)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cuda
