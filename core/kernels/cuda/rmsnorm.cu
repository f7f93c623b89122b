// RMSNorm over h, CUDA (Llama's norm; see kernels.h and ops.h): forward one
// block per row; backward one block per row for dx, plus the deterministic
// column reduction of layernorm.cu for dgamma (per-slice partial sums, then
// the slices added in order: reduce.cuh), so dgamma has the same bits every run.
// Rows go by 128-bit vectors when h and the pointers allow (vec.cuh).
// Letters: n rows (tokens), h hidden. x, y, dy, dx (n, h); gamma (h); rstd (n)
// fp32; dgamma (h) fp32.
#include <cmath>
#include <cstdint>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/kernels.h"
#include "core/kernels/cuda/norm_rows.cuh"
#include "core/kernels/cuda/reduce.cuh"
#include "core/kernels/cuda/vec.cuh"
#include "core/kernels/cuda/vector_plan.h"

namespace ptdp::cuda {
namespace {

using Cfg = NormRowConfig;

// y (n, h) = x·rstd·gamma, rstd = 1/sqrt(mean(x²) + eps).
template <int W, class T>
__global__ void rmsnorm_forward_kernel(const T* x, const T* gamma, std::int64_t n, std::int64_t h, float eps, T* y,
                                       float* rstd) {
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const T* xi = x + row * h;
    const float sq = thread_row_sum<W>(xi, h, SquareAbout{0.0f});
    const float r = 1.0f / sqrtf(dev::block_sum<Cfg::kThreads>(sq) / static_cast<float>(h) + eps);
    vec::for_each_row_chunk<W>(h, [&](std::int64_t j, auto) {
      float v[W], g[W];
      vec::load<W>(xi + j, v);
      vec::load<W>(gamma + j, g);
      for (int k = 0; k < W; ++k) v[k] = v[k] * r * g[k];
      vec::store<W>(y + row * h + j, v);
    });
    if (threadIdx.x == 0) rstd[row] = r;
  }
}

// With xhat = x·rstd and g = dy·gamma: dx (n, h) = rstd·(g − xhat·mean_j(g·xhat)).
// Each thread reads its chunks of dy before writing them in dx (dx may alias dy).
template <int W, class T>
__global__ void rmsnorm_dx_kernel(const T* dy, const T* x, const T* gamma, const float* rstd, std::int64_t n,
                                  std::int64_t h, T* dx) {
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const T* dyi = dy + row * h;
    const T* xi = x + row * h;
    const float r = rstd[row];
    float gx_sum = 0.0f;
    vec::for_each_row_chunk<W>(h, [&](std::int64_t j, auto) {
      float d[W], v[W], gm[W];
      vec::load<W>(dyi + j, d);
      vec::load<W>(xi + j, v);
      vec::load<W>(gamma + j, gm);
      for (int k = 0; k < W; ++k) gx_sum += d[k] * gm[k] * v[k] * r;
    });
    const float gx_mean = dev::block_sum<Cfg::kThreads>(gx_sum) / static_cast<float>(h);
    vec::for_each_row_chunk<W>(h, [&](std::int64_t j, auto) {
      float d[W], v[W], gm[W];
      vec::load<W>(dyi + j, d);
      vec::load<W>(xi + j, v);
      vec::load<W>(gamma + j, gm);
      for (int k = 0; k < W; ++k) v[k] = r * (d[k] * gm[k] - v[k] * r * gx_mean);
      vec::store<W>(dx + row * h + j, v);
    });
  }
}

// Row blockIdx.y of partial (slices, h) = Σ over this slice's rows of dy·x·rstd,
// for the block's ColumnSumTile::kCols·W columns (vector_plan.h).
template <int W, class T>
__global__ void rmsnorm_dgamma_partials_kernel(const T* dy, const T* x, const float* rstd, std::int64_t n,
                                               std::int64_t h, float* partial) {
  const std::int64_t col0 = dev::tile_first_col<W>();
  float acc[W] = {};
  dev::for_each_slice_row(col0, n, h, [&](std::int64_t r) {
    float d[W], v[W];
    vec::load<W>(dy + r * h + col0, d);
    vec::load<W>(x + r * h + col0, v);
    const float rs = rstd[r];
    for (int k = 0; k < W; ++k) acc[k] += d[k] * (v[k] * rs);
  });
  dev::store_column_partial<ColumnSumTile::kCols, ColumnSumTile::kRows, W>(acc, col0, h, partial);
}

template <class T>
void launch_dgamma(const T* dy, const T* x, const float* rstd, std::int64_t n, std::int64_t h, float* dgamma,
                   cudaStream_t st) {
  const int w = row_width(Cfg::kVec, h, {{dy, sizeof(T)}, {x, sizeof(T)}});
  column_sums(n, h, w, {dgamma}, st, [&](dim3 grid, dim3 block, float* partial, std::int64_t) {
    vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
      rmsnorm_dgamma_partials_kernel<decltype(width)::value><<<grid, block, 0, st>>>(dy, x, rstd, n, h, partial);
    });
  });
}

}  // namespace

template <class T>
void rmsnorm_forward(const T* x, const T* gamma, std::int64_t n, std::int64_t h, float eps, T* y, float* rstd,
                     cudaStream_t st) {
  if (n <= 0 || h <= 0) return;
  const int w = row_width(Cfg::kVec, h, {{x, sizeof(T)}, {gamma, sizeof(T)}, {y, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    rmsnorm_forward_kernel<decltype(width)::value><<<norm_row_blocks(n), Cfg::kThreads, 0, st>>>(x, gamma, n, h, eps, y, rstd);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void rmsnorm_backward(const T* dy, const T* x, const T* gamma, const float* rstd, std::int64_t n, std::int64_t h,
                      T* dx, float* dgamma, cudaStream_t st) {
  if (n <= 0 || h <= 0) return;
  launch_dgamma(dy, x, rstd, n, h, dgamma, st);  // first: dx may alias dy
  const int w = row_width(Cfg::kVec, h, {{dy, sizeof(T)}, {x, sizeof(T)}, {gamma, sizeof(T)}, {dx, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    rmsnorm_dx_kernel<decltype(width)::value><<<norm_row_blocks(n), Cfg::kThreads, 0, st>>>(dy, x, gamma, rstd, n, h, dx);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

#define PTDP_INSTANTIATE(T)                                                                                  \
  template void rmsnorm_forward<T>(const T*, const T*, std::int64_t, std::int64_t, float, T*, float*,        \
                                   cudaStream_t);                                                            \
  template void rmsnorm_backward<T>(const T*, const T*, const T*, const float*, std::int64_t, std::int64_t, T*, \
                                    float*, cudaStream_t);
PTDP_INSTANTIATE(__nv_bfloat16)
PTDP_INSTANTIATE(__half)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cuda
