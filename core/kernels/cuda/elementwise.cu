// Element-wise CUDA kernels (see kernels.h): GeLU and its gradient, the fused
// bias+GeLU, residual add, bias add and bias gradient, scaling, the sum of
// squares of gradient clipping, and fp32 <-> T casts. fp32 math throughout;
// 128-bit accesses where the pointers and lengths allow (vec.cuh), and the two
// sums (bias gradient, sum of squares) in a fixed order, without atomics.
// Letters: n elements, rows × m for biased (rows, m) matrices.
#include <algorithm>
#include <cstdint>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/kernels.h"
#include "core/kernels/cuda/reduce.cuh"
#include "core/kernels/cuda/vec.cuh"
#include "core/kernels/cuda/vector_plan.h"

namespace ptdp::cuda {
namespace {

using dev::from_float;
using dev::to_float;

struct ElementwiseConfig {
  static constexpr int kThreads = 256;      // 1-D grid-stride kernels
  static constexpr int kMaxBlocks = 4096;   // enough to fill an H100 several times
  static constexpr int kVec16 = 8;          // 16-bit elements per 128-bit access
  static constexpr int kSumBlocks = 1024;   // sum_squares: blocks (partial sums), grid-stride beyond
};
using Cfg = ElementwiseConfig;

// Blocks for n elements taken `width` at a time.
unsigned blocks_for(std::int64_t n, int width) {
  return dev::grid_blocks(dev::ceil_div(n, width), Cfg::kThreads, Cfg::kMaxBlocks);
}

// dst (n) = op(src) element by element, From and To each fp32 or 16-bit;
// each chunk is read before it is written, so dst may alias src (scale in place).
template <int W, class From, class To, class Op>
__global__ void unary_kernel(const From* src, std::int64_t n, To* dst, Op op) {
  vec::for_each_chunk<W>(n, [&](std::int64_t i, auto width) {
    constexpr int K = decltype(width)::value;
    float v[K];
    vec::load<K>(src + i, v);
    for (float& e : v) e = op(e);
    vec::store<K>(dst + i, v);
  });
}

// out (n) = op(a, b) element by element; out may alias a or b (as unary_kernel).
template <int W, class T, class Op>
__global__ void binary_kernel(const T* a, const T* b, std::int64_t n, T* out, Op op) {
  vec::for_each_chunk<W>(n, [&](std::int64_t i, auto width) {
    constexpr int K = decltype(width)::value;
    float x[K], z[K];
    vec::load<K>(a + i, x);
    vec::load<K>(b + i, z);
    for (int k = 0; k < K; ++k) x[k] = op(x[k], z[k]);
    vec::store<K>(out + i, x);
  });
}

struct GeluOp {  // y = gelu(x)
  __device__ float operator()(float x) const { return dev::gelu(x); }
};
struct ScaleOp {  // x *= alpha
  float alpha;
  __device__ float operator()(float x) const { return x * alpha; }
};
struct CastOp {  // the rounding happens in the store
  __device__ float operator()(float x) const { return x; }
};
struct GeluBackwardOp {  // dx = dy · gelu'(x)
  __device__ float operator()(float dy, float x) const { return dy * dev::gelu_grad(x); }
};
struct AddOp {  // out = a + b
  __device__ float operator()(float a, float b) const { return a + b; }
};

// pre (rows, m) := pre + bias (rounded to T); y = gelu(the rounded pre), as the
// unfused bias_add followed by gelu_forward would give. With W > 1, m is a
// multiple of W, so a chunk never crosses a row and its bias chunk is aligned.
template <int W, class T>
__global__ void bias_gelu_forward_kernel(T* pre, const T* bias, std::int64_t rows, std::int64_t m, T* y) {
  vec::for_each_chunk<W>(rows * m, [&](std::int64_t i, auto width) {
    constexpr int K = decltype(width)::value;
    float p[K], b[K];
    vec::load<K>(pre + i, p);
    vec::load<K>(bias + i % m, b);
    for (int k = 0; k < K; ++k) p[k] = to_float(from_float<T>(p[k] + b[k]));
    vec::store<K>(pre + i, p);
    for (float& e : p) e = dev::gelu(e);
    vec::store<K>(y + i, p);
  });
}

// y (rows, m) += bias (m); m a multiple of W as in bias_gelu_forward_kernel.
template <int W, class T> __global__ void bias_add_kernel(T* y, const T* bias, std::int64_t rows, std::int64_t m) {
  vec::for_each_chunk<W>(rows * m, [&](std::int64_t i, auto width) {
    constexpr int K = decltype(width)::value;
    float v[K], b[K];
    vec::load<K>(y + i, v);
    vec::load<K>(bias + i % m, b);
    for (int k = 0; k < K; ++k) v[k] += b[k];
    vec::store<K>(y + i, v);
  });
}

// partial (slices, m) row blockIdx.y = Σ of dy's rows in this slice, for the
// block's ColumnSumTile::kCols·W columns (layout: vector_plan.h ColumnPartialsPlan).
template <int W, class T>
__global__ void bias_backward_partials_kernel(const T* dy, std::int64_t rows, std::int64_t m, float* partial) {
  const std::int64_t col0 = dev::tile_first_col<W>();
  float acc[W] = {};
  dev::for_each_slice_row(col0, rows, m, [&](std::int64_t r) {
    float d[W];
    vec::load<W>(dy + r * m + col0, d);
    for (int k = 0; k < W; ++k) acc[k] += d[k];
  });
  dev::store_column_partial<ColumnSumTile::kCols, ColumnSumTile::kRows, W>(acc, col0, m, partial);
}

// partial[blockIdx.x] = Σ x² over this block's elements, in fp32.
template <int W> __global__ void sum_squares_partials_kernel(const float* x, std::int64_t n, double* partial) {
  float acc = 0.0f;
  vec::for_each_chunk<W>(n, [&](std::int64_t i, auto width) {
    constexpr int K = decltype(width)::value;
    float v[K];
    vec::load<K>(x + i, v);
    for (const float e : v) acc += e * e;
  });
  const float block = dev::block_sum<Cfg::kThreads>(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = static_cast<double>(block);
}

// *out = Σ partial (blocks) in fp64: one warp, lane l adds partials l, l + 32,
// ... in order, then a fixed butterfly over the lanes.
__global__ void sum_partials_kernel(const double* partial, int blocks, double* out) {
  double acc = 0.0;
  for (int b = static_cast<int>(threadIdx.x); b < blocks; b += dev::kWarpSize) acc += partial[b];
  for (int offset = dev::kWarpSize / 2; offset > 0; offset /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
  if (threadIdx.x == 0) *out = acc;
}

// unary_kernel over n elements at the widest width both arrays allow.
template <class From, class To, class Op>
void launch_unary(const From* src, std::int64_t n, To* dst, Op op, cudaStream_t st) {
  if (n <= 0) return;
  constexpr int kVec = vector_elems(std::max(sizeof(From), sizeof(To)));
  const int w = flat_width(kVec, {{src, sizeof(From)}, {dst, sizeof(To)}});
  vec::dispatch_width<kVec>(w, [&](auto width) {
    unary_kernel<decltype(width)::value><<<blocks_for(n, w), Cfg::kThreads, 0, st>>>(src, n, dst, op);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

// binary_kernel over n 16-bit elements, by vectors where the arrays allow.
template <class T, class Op>
void launch_binary(const T* a, const T* b, std::int64_t n, T* out, Op op, cudaStream_t st) {
  if (n <= 0) return;
  const int w = flat_width(Cfg::kVec16, {{a, sizeof(T)}, {b, sizeof(T)}, {out, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec16>(w, [&](auto width) {
    binary_kernel<decltype(width)::value><<<blocks_for(n, w), Cfg::kThreads, 0, st>>>(a, b, n, out, op);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <class T> void gelu_forward(const T* x, std::int64_t n, T* y, cudaStream_t st) {
  launch_unary(x, n, y, GeluOp{}, st);
}

template <class T> void gelu_backward(const T* dy, const T* x, std::int64_t n, T* dx, cudaStream_t st) {
  launch_binary(dy, x, n, dx, GeluBackwardOp{}, st);
}

template <class T>
void bias_gelu_forward(T* pre, const T* bias, std::int64_t rows, std::int64_t m, T* y, cudaStream_t st) {
  if (rows <= 0 || m <= 0) return;
  const int w = row_width(Cfg::kVec16, m, {{pre, sizeof(T)}, {bias, sizeof(T)}, {y, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec16>(w, [&](auto width) {
    bias_gelu_forward_kernel<decltype(width)::value>
        <<<blocks_for(rows * m, w), Cfg::kThreads, 0, st>>>(pre, bias, rows, m, y);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T> void add(const T* a, const T* b, std::int64_t n, T* out, cudaStream_t st) {
  launch_binary(a, b, n, out, AddOp{}, st);
}

template <class T> void bias_add(T* y, const T* bias, std::int64_t rows, std::int64_t m, cudaStream_t st) {
  if (rows <= 0 || m <= 0) return;
  const int w = row_width(Cfg::kVec16, m, {{y, sizeof(T)}, {bias, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec16>(w, [&](auto width) {
    bias_add_kernel<decltype(width)::value><<<blocks_for(rows * m, w), Cfg::kThreads, 0, st>>>(y, bias, rows, m);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

// Two launches: per-slice column sums into a scratch workspace, then the
// slices added in order into dbias (deterministic: the grid depends on the shape only).
template <class T> void bias_backward(const T* dy, std::int64_t rows, std::int64_t m, float* dbias, cudaStream_t st) {
  if (rows <= 0 || m <= 0) return;
  const int w = row_width(Cfg::kVec16, m, {{dy, sizeof(T)}});
  column_sums(rows, m, w, {dbias}, st, [&](dim3 grid, dim3 block, float* partial, std::int64_t) {
    vec::dispatch_width<Cfg::kVec16>(w, [&](auto width) {
      bias_backward_partials_kernel<decltype(width)::value><<<grid, block, 0, st>>>(dy, rows, m, partial);
    });
  });
}

template <class T> void scale(T* x, std::int64_t n, float alpha, cudaStream_t st) {
  launch_unary(x, n, x, ScaleOp{alpha}, st);
}

// Per-block fp32 sums of squares into a scratch, then one warp adds them in
// fp64 in a fixed order and writes *out (no atomics: the same bits every run).
void sum_squares(const float* x, std::int64_t n, double* out, cudaStream_t st) {
  if (n <= 0) {
    PTDP_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(double), st));
    return;
  }
  constexpr int kVec = vector_elems(sizeof(float));
  const int w = flat_width(kVec, {{x, sizeof(float)}});
  const unsigned blocks = dev::grid_blocks(dev::ceil_div(n, w), Cfg::kThreads, Cfg::kSumBlocks);
  StreamScratch<double> partial(blocks, st);
  vec::dispatch_width<kVec>(w, [&](auto width) {
    sum_squares_partials_kernel<decltype(width)::value><<<blocks, Cfg::kThreads, 0, st>>>(x, n, partial.get());
  });
  PTDP_CUDA_CHECK_LAUNCH();
  sum_partials_kernel<<<1, dev::kWarpSize, 0, st>>>(partial.get(), static_cast<int>(blocks), out);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T> void cast_from_float(const float* src, std::int64_t n, T* dst, cudaStream_t st) {
  launch_unary(src, n, dst, CastOp{}, st);
}

template <class T> void cast_to_float(const T* src, std::int64_t n, float* dst, cudaStream_t st) {
  launch_unary(src, n, dst, CastOp{}, st);
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
