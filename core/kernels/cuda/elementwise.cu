// Element-wise CUDA kernels (see kernels.h): GeLU and its gradient, the fused
// bias+GeLU, residual add, bias add and bias gradient, scaling, the sum of
// squares of gradient clipping, and fp32 <-> T casts. fp32 math throughout.
// Letters: n elements, rows × m for biased (rows, m) matrices.
#include <cstdint>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/kernels.h"

namespace ptdp::cuda {
namespace {

using dev::from_float;
using dev::to_float;

struct ElementwiseConfig {
  static constexpr int kThreads = 256;      // 1-D grid-stride kernels
  static constexpr int kMaxBlocks = 4096;   // enough to fill an H100 several times
  static constexpr int kColThreads = 32;    // bias_backward: columns of a tile (one warp, coalesced)
  static constexpr int kRowThreads = 8;     // bias_backward: rows of a tile
  static constexpr int kMaxRowBlocks = 64;  // bias_backward: row slices (atomics per column)
};
using Cfg = ElementwiseConfig;

unsigned blocks_for(std::int64_t n) { return dev::grid_blocks(n, Cfg::kThreads, Cfg::kMaxBlocks); }

// Grid-stride index range over [0, n).
#define PTDP_GRID_STRIDE(i, n)                                                                   \
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

// y (n) = gelu(x).
template <class T> __global__ void gelu_forward_kernel(const T* x, std::int64_t n, T* y) {
  PTDP_GRID_STRIDE(i, n) y[i] = from_float<T>(dev::gelu(to_float(x[i])));
}

// dx (n) = dy · gelu'(x).
template <class T> __global__ void gelu_backward_kernel(const T* dy, const T* x, std::int64_t n, T* dx) {
  PTDP_GRID_STRIDE(i, n) dx[i] = from_float<T>(to_float(dy[i]) * dev::gelu_grad(to_float(x[i])));
}

// pre (rows, m) := pre + bias (rounded to T); y = gelu(the rounded pre), as the
// unfused bias_add followed by gelu_forward would give.
template <class T>
__global__ void bias_gelu_forward_kernel(T* pre, const T* bias, std::int64_t rows, std::int64_t m, T* y) {
  PTDP_GRID_STRIDE(i, rows * m) {
    const T p = from_float<T>(to_float(pre[i]) + to_float(bias[i % m]));
    pre[i] = p;
    y[i] = from_float<T>(dev::gelu(to_float(p)));
  }
}

// out (n) = a + b; each element read before it is written, so out may alias a or b.
template <class T> __global__ void add_kernel(const T* a, const T* b, std::int64_t n, T* out) {
  PTDP_GRID_STRIDE(i, n) out[i] = from_float<T>(to_float(a[i]) + to_float(b[i]));
}

// y (rows, m) += bias (m).
template <class T> __global__ void bias_add_kernel(T* y, const T* bias, std::int64_t rows, std::int64_t m) {
  PTDP_GRID_STRIDE(i, rows * m) y[i] = from_float<T>(to_float(y[i]) + to_float(bias[i % m]));
}

// dbias (m) += Σ rows of dy (rows, m). Block (kColThreads, kRowThreads) owns
// kColThreads columns and the row slice blockIdx.y; its partial column sums go
// to dbias by fp32 atomicAdd (gridDim.y adds per column).
template <class T> __global__ void bias_backward_kernel(const T* dy, std::int64_t rows, std::int64_t m, float* dbias) {
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * Cfg::kColThreads + threadIdx.x;
  float acc = 0.0f;
  if (col < m) {
    for (std::int64_t r = static_cast<std::int64_t>(blockIdx.y) * Cfg::kRowThreads + threadIdx.y; r < rows;
         r += static_cast<std::int64_t>(gridDim.y) * Cfg::kRowThreads)
      acc += to_float(dy[r * m + col]);
  }
  const float sum = dev::column_block_sum<Cfg::kColThreads, Cfg::kRowThreads>(acc);
  if (threadIdx.y == 0 && col < m) atomicAdd(dbias + col, sum);
}

// x (n) *= alpha.
template <class T> __global__ void scale_kernel(T* x, std::int64_t n, float alpha) {
  PTDP_GRID_STRIDE(i, n) x[i] = from_float<T>(to_float(x[i]) * alpha);
}

// *out += Σ x² of this block's elements: fp32 within the block, one fp64 atomicAdd per block.
__global__ void sum_squares_kernel(const float* x, std::int64_t n, double* out) {
  float acc = 0.0f;
  PTDP_GRID_STRIDE(i, n) acc += x[i] * x[i];
  const float block = dev::block_sum<Cfg::kThreads>(acc);
  if (threadIdx.x == 0) atomicAdd(out, static_cast<double>(block));
}

template <class From, class To> __global__ void cast_kernel(const From* src, std::int64_t n, To* dst) {
  PTDP_GRID_STRIDE(i, n) dst[i] = from_float<To>(to_float(src[i]));
}

#undef PTDP_GRID_STRIDE

}  // namespace

template <class T> void gelu_forward(const T* x, std::int64_t n, T* y, cudaStream_t st) {
  if (n <= 0) return;
  gelu_forward_kernel<<<blocks_for(n), Cfg::kThreads, 0, st>>>(x, n, y);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T> void gelu_backward(const T* dy, const T* x, std::int64_t n, T* dx, cudaStream_t st) {
  if (n <= 0) return;
  gelu_backward_kernel<<<blocks_for(n), Cfg::kThreads, 0, st>>>(dy, x, n, dx);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void bias_gelu_forward(T* pre, const T* bias, std::int64_t rows, std::int64_t m, T* y, cudaStream_t st) {
  if (rows <= 0 || m <= 0) return;
  bias_gelu_forward_kernel<<<blocks_for(rows * m), Cfg::kThreads, 0, st>>>(pre, bias, rows, m, y);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T> void add(const T* a, const T* b, std::int64_t n, T* out, cudaStream_t st) {
  if (n <= 0) return;
  add_kernel<<<blocks_for(n), Cfg::kThreads, 0, st>>>(a, b, n, out);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T> void bias_add(T* y, const T* bias, std::int64_t rows, std::int64_t m, cudaStream_t st) {
  if (rows <= 0 || m <= 0) return;
  bias_add_kernel<<<blocks_for(rows * m), Cfg::kThreads, 0, st>>>(y, bias, rows, m);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T> void bias_backward(const T* dy, std::int64_t rows, std::int64_t m, float* dbias, cudaStream_t st) {
  if (rows <= 0 || m <= 0) return;
  const dim3 block(Cfg::kColThreads, Cfg::kRowThreads);
  const dim3 grid(dev::grid_blocks(m, Cfg::kColThreads, INT32_MAX),
                  dev::grid_blocks(rows, Cfg::kRowThreads, Cfg::kMaxRowBlocks));
  bias_backward_kernel<<<grid, block, 0, st>>>(dy, rows, m, dbias);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T> void scale(T* x, std::int64_t n, float alpha, cudaStream_t st) {
  if (n <= 0) return;
  scale_kernel<<<blocks_for(n), Cfg::kThreads, 0, st>>>(x, n, alpha);
  PTDP_CUDA_CHECK_LAUNCH();
}

void sum_squares(const float* x, std::int64_t n, double* out, cudaStream_t st) {
  PTDP_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(double), st));  // written, not accumulated
  if (n <= 0) return;
  sum_squares_kernel<<<blocks_for(n), Cfg::kThreads, 0, st>>>(x, n, out);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T> void cast_from_float(const float* src, std::int64_t n, T* dst, cudaStream_t st) {
  if (n <= 0) return;
  cast_kernel<float, T><<<blocks_for(n), Cfg::kThreads, 0, st>>>(src, n, dst);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T> void cast_to_float(const T* src, std::int64_t n, float* dst, cudaStream_t st) {
  if (n <= 0) return;
  cast_kernel<T, float><<<blocks_for(n), Cfg::kThreads, 0, st>>>(src, n, dst);
  PTDP_CUDA_CHECK_LAUNCH();
}

#define PTDP_INSTANTIATE_16(T)                                                                      \
  template void gelu_forward<T>(const T*, std::int64_t, T*, cudaStream_t);                          \
  template void gelu_backward<T>(const T*, const T*, std::int64_t, T*, cudaStream_t);               \
  template void bias_gelu_forward<T>(T*, const T*, std::int64_t, std::int64_t, T*, cudaStream_t);   \
  template void add<T>(const T*, const T*, std::int64_t, T*, cudaStream_t);                         \
  template void bias_add<T>(T*, const T*, std::int64_t, std::int64_t, cudaStream_t);                \
  template void bias_backward<T>(const T*, std::int64_t, std::int64_t, float*, cudaStream_t);
#define PTDP_INSTANTIATE_ALL(T)                                                  \
  template void scale<T>(T*, std::int64_t, float, cudaStream_t);                 \
  template void cast_from_float<T>(const float*, std::int64_t, T*, cudaStream_t); \
  template void cast_to_float<T>(const T*, std::int64_t, float*, cudaStream_t);
PTDP_INSTANTIATE_16(__nv_bfloat16)
PTDP_INSTANTIATE_16(__half)
PTDP_INSTANTIATE_ALL(__nv_bfloat16)
PTDP_INSTANTIATE_ALL(__half)
PTDP_INSTANTIATE_ALL(float)
#undef PTDP_INSTANTIATE_16
#undef PTDP_INSTANTIATE_ALL

}  // namespace ptdp::cuda
