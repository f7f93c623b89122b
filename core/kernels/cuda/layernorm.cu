// Layer normalisation over h, CUDA (see kernels.h and core/kernels/cpu/layernorm.h):
// forward one block per row (two-pass mean and variance); backward one block
// per row for dx, plus a column reduction with fp32 atomics for dgamma, dbeta.
// Letters: n rows (tokens), h hidden. x, y, dy, dx (n, h); gamma, beta (h);
// mean, rstd (n) fp32; dgamma, dbeta (h) fp32.
#include <cmath>
#include <cstdint>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/kernels.h"

namespace ptdp::cuda {
namespace {

using dev::from_float;
using dev::to_float;

struct LayernormConfig {
  static constexpr int kThreads = 256;        // one block per row; threads stride over h
  static constexpr int kMaxRowBlocks = 8192;  // grid-stride over rows beyond this
  static constexpr int kColThreads = 32;      // dgamma/dbeta: columns of a tile (one warp, coalesced)
  static constexpr int kRowThreads = 8;       // dgamma/dbeta: rows of a tile
  static constexpr int kMaxSliceBlocks = 64;  // dgamma/dbeta: row slices (atomics per column)
};
using Cfg = LayernormConfig;

// y (n, h) = (x − mean)·rstd·gamma + beta, rstd = 1/sqrt(var + eps), var biased.
template <class T>
__global__ void layernorm_forward_kernel(const T* x, const T* gamma, const T* beta, std::int64_t n, std::int64_t h,
                                         float eps, T* y, float* mean, float* rstd) {
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const T* xi = x + row * h;
    float sum = 0.0f;
    for (std::int64_t j = threadIdx.x; j < h; j += Cfg::kThreads) sum += to_float(xi[j]);
    const float mu = dev::block_sum<Cfg::kThreads>(sum) / static_cast<float>(h);
    float sq = 0.0f;
    for (std::int64_t j = threadIdx.x; j < h; j += Cfg::kThreads) {
      const float c = to_float(xi[j]) - mu;
      sq += c * c;
    }
    const float var = dev::block_sum<Cfg::kThreads>(sq) / static_cast<float>(h);
    const float r = 1.0f / sqrtf(var + eps);
    for (std::int64_t j = threadIdx.x; j < h; j += Cfg::kThreads)
      y[row * h + j] = from_float<T>((to_float(xi[j]) - mu) * r * to_float(gamma[j]) + to_float(beta[j]));
    if (threadIdx.x == 0) {
      mean[row] = mu;
      rstd[row] = r;
    }
  }
}

// With xhat = (x − mean)·rstd and g = dy·gamma:
// dx (n, h) = rstd · (g − mean_j(g) − xhat · mean_j(g · xhat)).
template <class T>
__global__ void layernorm_dx_kernel(const T* dy, const T* x, const T* gamma, const float* mean, const float* rstd,
                                    std::int64_t n, std::int64_t h, T* dx) {
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const T* dyi = dy + row * h;
    const T* xi = x + row * h;
    const float mu = mean[row], r = rstd[row];
    float g_sum = 0.0f, gx_sum = 0.0f;
    for (std::int64_t j = threadIdx.x; j < h; j += Cfg::kThreads) {
      const float g = to_float(dyi[j]) * to_float(gamma[j]);
      g_sum += g;
      gx_sum += g * (to_float(xi[j]) - mu) * r;
    }
    const float g_mean = dev::block_sum<Cfg::kThreads>(g_sum) / static_cast<float>(h);
    const float gx_mean = dev::block_sum<Cfg::kThreads>(gx_sum) / static_cast<float>(h);
    for (std::int64_t j = threadIdx.x; j < h; j += Cfg::kThreads) {
      const float xhat = (to_float(xi[j]) - mu) * r;
      dx[row * h + j] = from_float<T>(r * (to_float(dyi[j]) * to_float(gamma[j]) - g_mean - xhat * gx_mean));
    }
  }
}

// dgamma (h) += Σ_rows dy·xhat; dbeta (h) += Σ_rows dy. Block (kColThreads,
// kRowThreads) owns kColThreads columns and the row slice blockIdx.y; partial
// column sums go out by fp32 atomicAdd (gridDim.y adds per column).
template <class T>
__global__ void layernorm_dgamma_dbeta_kernel(const T* dy, const T* x, const float* mean, const float* rstd,
                                              std::int64_t n, std::int64_t h, float* dgamma, float* dbeta) {
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * Cfg::kColThreads + threadIdx.x;
  float g_acc = 0.0f, b_acc = 0.0f;
  if (col < h) {
    for (std::int64_t r = static_cast<std::int64_t>(blockIdx.y) * Cfg::kRowThreads + threadIdx.y; r < n;
         r += static_cast<std::int64_t>(gridDim.y) * Cfg::kRowThreads) {
      const float d = to_float(dy[r * h + col]);
      g_acc += d * ((to_float(x[r * h + col]) - mean[r]) * rstd[r]);
      b_acc += d;
    }
  }
  const float g_sum = dev::column_block_sum<Cfg::kColThreads, Cfg::kRowThreads>(g_acc);
  const float b_sum = dev::column_block_sum<Cfg::kColThreads, Cfg::kRowThreads>(b_acc);
  if (threadIdx.y == 0 && col < h) {
    atomicAdd(dgamma + col, g_sum);
    atomicAdd(dbeta + col, b_sum);
  }
}

unsigned row_blocks(std::int64_t n) { return dev::grid_blocks(n, 1, Cfg::kMaxRowBlocks); }

}  // namespace

template <class T>
void layernorm_forward(const T* x, const T* gamma, const T* beta, std::int64_t n, std::int64_t h, float eps, T* y,
                       float* mean, float* rstd, cudaStream_t st) {
  if (n <= 0 || h <= 0) return;
  layernorm_forward_kernel<<<row_blocks(n), Cfg::kThreads, 0, st>>>(x, gamma, beta, n, h, eps, y, mean, rstd);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void layernorm_backward(const T* dy, const T* x, const T* gamma, const float* mean, const float* rstd, std::int64_t n,
                        std::int64_t h, T* dx, float* dgamma, float* dbeta, cudaStream_t st) {
  if (n <= 0 || h <= 0) return;
  layernorm_dx_kernel<<<row_blocks(n), Cfg::kThreads, 0, st>>>(dy, x, gamma, mean, rstd, n, h, dx);
  PTDP_CUDA_CHECK_LAUNCH();
  const dim3 block(Cfg::kColThreads, Cfg::kRowThreads);
  const dim3 grid(dev::grid_blocks(h, Cfg::kColThreads, INT32_MAX),
                  dev::grid_blocks(n, Cfg::kRowThreads, Cfg::kMaxSliceBlocks));
  layernorm_dgamma_dbeta_kernel<<<grid, block, 0, st>>>(dy, x, mean, rstd, n, h, dgamma, dbeta);
  PTDP_CUDA_CHECK_LAUNCH();
}

#define PTDP_INSTANTIATE(T)                                                                                      \
  template void layernorm_forward<T>(const T*, const T*, const T*, std::int64_t, std::int64_t, float, T*, float*, \
                                     float*, cudaStream_t);                                                      \
  template void layernorm_backward<T>(const T*, const T*, const T*, const float*, const float*, std::int64_t,     \
                                      std::int64_t, T*, float*, float*, cudaStream_t);
PTDP_INSTANTIATE(__nv_bfloat16)
PTDP_INSTANTIATE(__half)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cuda
