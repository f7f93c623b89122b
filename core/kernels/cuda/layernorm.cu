// Layer normalisation over h, CUDA (see kernels.h and core/kernels/cpu/layernorm.h):
// forward one block per row (two-pass mean and variance); backward one block
// per row for dx, plus a deterministic column reduction for dgamma, dbeta
// (per-slice partial sums, then the slices added in order: reduce.cuh).
// Rows go by 128-bit vectors when h and the pointers allow (vec.cuh). Also the
// residual add fused into the following layernorm (bias_residual_layernorm).
// Letters: n rows (tokens), h hidden. x, y, dy, dx (n, h); gamma, beta (h);
// mean, rstd (n) fp32; dgamma, dbeta (h) fp32.
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

// One row of layernorm given this thread's partial sum of its chunks of xi
// (h): mu = Σ x / h, r = 1/sqrt(var + eps) with var biased (second pass over
// the thread's own chunks), yi (h) = (xi − mu)·r·gamma + beta; thread 0
// writes *mean = mu, *rstd = r.
template <int W, class T>
__device__ inline void normalise_row(const T* xi, float partial_sum, const T* gamma, const T* beta, std::int64_t h,
                                     float eps, T* yi, float* mean, float* rstd) {
  const float mu = dev::block_sum<Cfg::kThreads>(partial_sum) / static_cast<float>(h);
  const float sq = thread_row_sum<W>(xi, h, SquareAbout{mu});
  const float var = dev::block_sum<Cfg::kThreads>(sq) / static_cast<float>(h);
  const float r = 1.0f / sqrtf(var + eps);
  vec::for_each_row_chunk<W>(h, [&](std::int64_t j, auto) {
    float v[W], g[W], b[W];
    vec::load<W>(xi + j, v);
    vec::load<W>(gamma + j, g);
    vec::load<W>(beta + j, b);
    for (int k = 0; k < W; ++k) v[k] = (v[k] - mu) * r * g[k] + b[k];
    vec::store<W>(yi + j, v);
  });
  if (threadIdx.x == 0) {
    *mean = mu;
    *rstd = r;
  }
}

// y (n, h) = (x − mean)·rstd·gamma + beta, rstd = 1/sqrt(var + eps), var biased.
template <int W, class T>
__global__ void layernorm_forward_kernel(const T* x, const T* gamma, const T* beta, std::int64_t n, std::int64_t h,
                                         float eps, T* y, float* mean, float* rstd) {
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const T* xi = x + row * h;
    const float sum = thread_row_sum<W>(xi, h, RowValue{});
    normalise_row<W>(xi, sum, gamma, beta, h, eps, y + row * h, mean + row, rstd + row);
  }
}

// v[k] = p[k], k < W: one vector access when kVector, else W scalar ones (the
// residual inputs may be unaligned where the layernorm arrays are not).
template <int W, bool kVector, class T> __device__ inline void load_chunk(const T* p, float (&v)[W]) {
  if constexpr (kVector)
    vec::load<W>(p, v);
  else
    for (int k = 0; k < W; ++k) v[k] = dev::to_float(p[k]);
}

// sum (n, h) = y + bias + residual, then ln = layernorm(sum) as above.
// Exact fusion: each element is (y + bias) + residual in fp32 rounded once to
// T, as bias_residual_add (fused_residual.cu) computes it, and the statistics
// and ln are computed from that ROUNDED value, not the fp32 one, with the
// chunk width W layernorm_forward picks for (sum, gamma, beta, ln): each
// thread then adds the same values in the same order, the block sums are the
// same tree, and mean, rstd, ln are the bits of the unfused pair. Only the
// loads of y, bias, residual may be scalar (kVector false) without changing
// any arithmetic. Each thread reads its chunks of y and residual before
// writing them in sum, and later passes re-read only its own chunks of sum,
// so sum may alias y or residual.
template <int W, bool kVector, class T>
__global__ void bias_residual_layernorm_kernel(const T* y, const T* bias, const T* residual, const T* gamma,
                                               const T* beta, std::int64_t n, std::int64_t h, float eps, T* sum,
                                               T* ln, float* mean, float* rstd) {
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    T* si = sum + row * h;
    float partial = 0.0f;
    vec::for_each_row_chunk<W>(h, [&](std::int64_t j, auto) {
      float a[W], b[W], c[W];
      load_chunk<W, kVector>(y + row * h + j, a);
      load_chunk<W, kVector>(bias + j, b);
      load_chunk<W, kVector>(residual + row * h + j, c);
      for (int k = 0; k < W; ++k) a[k] = dev::to_float(dev::from_float<T>(a[k] + b[k] + c[k]));
      vec::store<W>(si + j, a);  // already representable: stored exactly
      for (const float e : a) partial += e;
    });
    normalise_row<W>(si, partial, gamma, beta, h, eps, ln + row * h, mean + row, rstd + row);
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
// of dy·xhat and dy, for the block's ColumnSumTile::kCols·W columns (vector_plan.h).
template <int W, class T>
__global__ void layernorm_dgamma_dbeta_partials_kernel(const T* dy, const T* x, const float* mean, const float* rstd,
                                                       std::int64_t n, std::int64_t h, float* partial_g,
                                                       float* partial_b) {
  const std::int64_t col0 = dev::tile_first_col<W>();
  float g_acc[W] = {}, b_acc[W] = {};
  dev::for_each_slice_row(col0, n, h, [&](std::int64_t r) {
    float d[W], v[W];
    vec::load<W>(dy + r * h + col0, d);
    vec::load<W>(x + r * h + col0, v);
    const float mu = mean[r], rs = rstd[r];
    for (int k = 0; k < W; ++k) {
      g_acc[k] += d[k] * ((v[k] - mu) * rs);
      b_acc[k] += d[k];
    }
  });
  dev::store_column_partial<ColumnSumTile::kCols, ColumnSumTile::kRows, W>(g_acc, col0, h, partial_g);
  dev::store_column_partial<ColumnSumTile::kCols, ColumnSumTile::kRows, W>(b_acc, col0, h, partial_b);
}

template <class T>
void launch_dgamma_dbeta(const T* dy, const T* x, const float* mean, const float* rstd, std::int64_t n,
                         std::int64_t h, float* dgamma, float* dbeta, cudaStream_t st) {
  const int w = row_width(Cfg::kVec, h, {{dy, sizeof(T)}, {x, sizeof(T)}});
  column_sums(n, h, w, {dgamma, dbeta}, st, [&](dim3 grid, dim3 block, float* partial, std::int64_t stride) {
    vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
      layernorm_dgamma_dbeta_partials_kernel<decltype(width)::value>
          <<<grid, block, 0, st>>>(dy, x, mean, rstd, n, h, partial, partial + stride);
    });
  });
}

}  // namespace

template <class T>
void layernorm_forward(const T* x, const T* gamma, const T* beta, std::int64_t n, std::int64_t h, float eps, T* y,
                       float* mean, float* rstd, cudaStream_t st) {
  if (n <= 0 || h <= 0) return;
  const int w = row_width(Cfg::kVec, h, {{x, sizeof(T)}, {gamma, sizeof(T)}, {beta, sizeof(T)}, {y, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    layernorm_forward_kernel<decltype(width)::value>
        <<<norm_row_blocks(n), Cfg::kThreads, 0, st>>>(x, gamma, beta, n, h, eps, y, mean, rstd);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void bias_residual_layernorm(const T* y, const T* bias, const T* residual, const T* gamma, const T* beta,
                             std::int64_t n, std::int64_t h, float eps, T* sum, T* ln, float* mean, float* rstd,
                             cudaStream_t st) {
  if (n <= 0 || h <= 0) return;
  // The width layernorm_forward(sum, …) would pick fixes the summation order
  // (see the kernel); the inputs go by vectors only when they allow it too.
  const int w = row_width(Cfg::kVec, h, {{sum, sizeof(T)}, {gamma, sizeof(T)}, {beta, sizeof(T)}, {ln, sizeof(T)}});
  const bool vector_inputs = flat_width(w, {{y, sizeof(T)}, {bias, sizeof(T)}, {residual, sizeof(T)}}) == w;
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    constexpr int W = decltype(width)::value;
    if (vector_inputs)
      bias_residual_layernorm_kernel<W, true><<<norm_row_blocks(n), Cfg::kThreads, 0, st>>>(
          y, bias, residual, gamma, beta, n, h, eps, sum, ln, mean, rstd);
    else
      bias_residual_layernorm_kernel<W, false><<<norm_row_blocks(n), Cfg::kThreads, 0, st>>>(
          y, bias, residual, gamma, beta, n, h, eps, sum, ln, mean, rstd);
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
        <<<norm_row_blocks(n), Cfg::kThreads, 0, st>>>(dy, x, gamma, mean, rstd, n, h, dx);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

#define PTDP_INSTANTIATE(T)                                                                                      \
  template void layernorm_forward<T>(const T*, const T*, const T*, std::int64_t, std::int64_t, float, T*, float*, \
                                     float*, cudaStream_t);                                                      \
  template void layernorm_backward<T>(const T*, const T*, const T*, const float*, const float*, std::int64_t,     \
                                      std::int64_t, T*, float*, float*, cudaStream_t);       \
  template void bias_residual_layernorm<T>(const T*, const T*, const T*, const T*, const T*, std::int64_t,     \
                                           std::int64_t, float, T*, T*, float*, float*, cudaStream_t);
PTDP_INSTANTIATE(__nv_bfloat16)
PTDP_INSTANTIATE(__half)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cuda
