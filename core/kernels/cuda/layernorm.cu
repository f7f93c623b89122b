// Layer normalisation over h, CUDA (see kernels.h and core/kernels/cpu/layernorm.h):
// forward one block per row (two-pass mean and variance); backward one block
// per row for dx, plus a deterministic column reduction for dgamma, dbeta
// (per-slice partial sums, then the slices added in order: reduce.cuh).
// Rows go by 128-bit vectors when h and the pointers allow (vec.cuh).
// Letters: n rows (tokens), h hidden. x, y, dy, dx (n, h); gamma, beta (h);
// mean, rstd (n) fp32; dgamma, dbeta (h) fp32.
#include <cmath>
#include <cstdint>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/kernels.h"
#include "core/kernels/cuda/reduce.cuh"
#include "core/kernels/cuda/vec.cuh"
#include "core/kernels/cuda/vector_plan.h"

namespace ptdp::cuda {
namespace {

struct LayernormConfig {
  static constexpr int kThreads = 256;        // one block per row; threads stride over h
  static constexpr int kMaxRowBlocks = 8192;  // grid-stride over rows beyond this
  static constexpr int kVec = 8;              // 16-bit elements per 128-bit access
  static constexpr int kColThreads = 32;      // dgamma/dbeta: column threads of a tile (one warp)
  static constexpr int kRowThreads = 8;       // dgamma/dbeta: row threads of a tile
  static constexpr int kMaxSlices = 128;      // dgamma/dbeta: row slices (partial rows of the workspace)
};
using Cfg = LayernormConfig;

// y (n, h) = (x − mean)·rstd·gamma + beta, rstd = 1/sqrt(var + eps), var biased.
template <int W, class T>
__global__ void layernorm_forward_kernel(const T* x, const T* gamma, const T* beta, std::int64_t n, std::int64_t h,
                                         float eps, T* y, float* mean, float* rstd) {
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const T* xi = x + row * h;
    float sum = 0.0f;
    vec::for_each_row_chunk<W>(h, [&](std::int64_t j, auto) {
      float v[W];
      vec::load<W>(xi + j, v);
      for (const float e : v) sum += e;
    });
    const float mu = dev::block_sum<Cfg::kThreads>(sum) / static_cast<float>(h);
    float sq = 0.0f;
    vec::for_each_row_chunk<W>(h, [&](std::int64_t j, auto) {
      float v[W];
      vec::load<W>(xi + j, v);
      for (const float e : v) sq += (e - mu) * (e - mu);
    });
    const float var = dev::block_sum<Cfg::kThreads>(sq) / static_cast<float>(h);
    const float r = 1.0f / sqrtf(var + eps);
    vec::for_each_row_chunk<W>(h, [&](std::int64_t j, auto) {
      float v[W], g[W], b[W];
      vec::load<W>(xi + j, v);
      vec::load<W>(gamma + j, g);
      vec::load<W>(beta + j, b);
      for (int k = 0; k < W; ++k) v[k] = (v[k] - mu) * r * g[k] + b[k];
      vec::store<W>(y + row * h + j, v);
    });
    if (threadIdx.x == 0) {
      mean[row] = mu;
      rstd[row] = r;
    }
  }
}

// With xhat = (x − mean)·rstd and g = dy·gamma:
// dx (n, h) = rstd · (g − mean_j(g) − xhat · mean_j(g · xhat)).
template <int W, class T>
__global__ void layernorm_dx_kernel(const T* dy, const T* x, const T* gamma, const float* mean, const float* rstd,
                                    std::int64_t n, std::int64_t h, T* dx) {
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const T* dyi = dy + row * h;
    const T* xi = x + row * h;
    const float mu = mean[row], r = rstd[row];
    float g_sum = 0.0f, gx_sum = 0.0f;
    vec::for_each_row_chunk<W>(h, [&](std::int64_t j, auto) {
      float d[W], v[W], gm[W];
      vec::load<W>(dyi + j, d);
      vec::load<W>(xi + j, v);
      vec::load<W>(gamma + j, gm);
      for (int k = 0; k < W; ++k) {
        const float g = d[k] * gm[k];
        g_sum += g;
        gx_sum += g * (v[k] - mu) * r;
      }
    });
    const float g_mean = dev::block_sum<Cfg::kThreads>(g_sum) / static_cast<float>(h);
    const float gx_mean = dev::block_sum<Cfg::kThreads>(gx_sum) / static_cast<float>(h);
    vec::for_each_row_chunk<W>(h, [&](std::int64_t j, auto) {
      float d[W], v[W], gm[W];
      vec::load<W>(dyi + j, d);
      vec::load<W>(xi + j, v);
      vec::load<W>(gamma + j, gm);
      for (int k = 0; k < W; ++k) v[k] = r * (d[k] * gm[k] - g_mean - (v[k] - mu) * r * gx_mean);
      vec::store<W>(dx + row * h + j, v);
    });
  }
}

// Row blockIdx.y of partial_g, partial_b (slices, h) = Σ over this slice's rows
// of dy·xhat and dy, for the block's kColThreads·W columns (vector_plan.h).
template <int W, class T>
__global__ void layernorm_dgamma_dbeta_partials_kernel(const T* dy, const T* x, const float* mean, const float* rstd,
                                                       std::int64_t n, std::int64_t h, float* partial_g,
                                                       float* partial_b) {
  const std::int64_t col0 = (static_cast<std::int64_t>(blockIdx.x) * Cfg::kColThreads + threadIdx.x) * W;
  float g_acc[W] = {}, b_acc[W] = {};
  if (col0 < h) {
    const std::int64_t stride = slice_row_stride(gridDim.y, Cfg::kRowThreads);
    for (std::int64_t r = slice_first_row(blockIdx.y, static_cast<int>(threadIdx.y), Cfg::kRowThreads); r < n;
         r += stride) {
      float d[W], v[W];
      vec::load<W>(dy + r * h + col0, d);
      vec::load<W>(x + r * h + col0, v);
      const float mu = mean[r], rs = rstd[r];
      for (int k = 0; k < W; ++k) {
        g_acc[k] += d[k] * ((v[k] - mu) * rs);
        b_acc[k] += d[k];
      }
    }
  }
  dev::store_column_partial<Cfg::kColThreads, Cfg::kRowThreads, W>(g_acc, col0, h, partial_g);
  dev::store_column_partial<Cfg::kColThreads, Cfg::kRowThreads, W>(b_acc, col0, h, partial_b);
}

unsigned row_blocks(std::int64_t n) { return dev::grid_blocks(n, 1, Cfg::kMaxRowBlocks); }

template <class T>
void launch_dgamma_dbeta(const T* dy, const T* x, const float* mean, const float* rstd, std::int64_t n,
                         std::int64_t h, float* dgamma, float* dbeta, cudaStream_t st) {
  const int w = row_width(Cfg::kVec, h, {{dy, sizeof(T)}, {x, sizeof(T)}});
  const auto plan = column_partials_plan(n, h, w, Cfg::kColThreads, Cfg::kRowThreads, Cfg::kMaxSlices);
  StreamScratch<float> partial(2 * static_cast<std::size_t>(plan.workspace_floats), st);
  float* partial_g = partial.get();
  float* partial_b = partial.get() + plan.workspace_floats;
  const dim3 grid(static_cast<unsigned>(plan.col_tiles), static_cast<unsigned>(plan.slices));
  const dim3 block(Cfg::kColThreads, Cfg::kRowThreads);
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    layernorm_dgamma_dbeta_partials_kernel<decltype(width)::value>
        <<<grid, block, 0, st>>>(dy, x, mean, rstd, n, h, partial_g, partial_b);
  });
  PTDP_CUDA_CHECK_LAUNCH();
  add_column_partials(partial_g, plan.slices, h, dgamma, st);
  add_column_partials(partial_b, plan.slices, h, dbeta, st);
}

}  // namespace

template <class T>
void layernorm_forward(const T* x, const T* gamma, const T* beta, std::int64_t n, std::int64_t h, float eps, T* y,
                       float* mean, float* rstd, cudaStream_t st) {
  if (n <= 0 || h <= 0) return;
  const int w = row_width(Cfg::kVec, h, {{x, sizeof(T)}, {gamma, sizeof(T)}, {beta, sizeof(T)}, {y, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    layernorm_forward_kernel<decltype(width)::value>
        <<<row_blocks(n), Cfg::kThreads, 0, st>>>(x, gamma, beta, n, h, eps, y, mean, rstd);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void layernorm_backward(const T* dy, const T* x, const T* gamma, const float* mean, const float* rstd, std::int64_t n,
                        std::int64_t h, T* dx, float* dgamma, float* dbeta, cudaStream_t st) {
  if (n <= 0 || h <= 0) return;
  launch_dgamma_dbeta(dy, x, mean, rstd, n, h, dgamma, dbeta, st);  // first: dx may alias dy
  const int w = row_width(Cfg::kVec, h, {{dy, sizeof(T)}, {x, sizeof(T)}, {gamma, sizeof(T)}, {dx, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    layernorm_dx_kernel<decltype(width)::value>
        <<<row_blocks(n), Cfg::kThreads, 0, st>>>(dy, x, gamma, mean, rstd, n, h, dx);
  });
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
