// The launch shape the row-normalising kernels share (layernorm.cu,
// rmsnorm.cu): one block a row, its threads striding over h by 128-bit
// vectors where they can, a grid-stride loop over rows beyond kMaxRowBlocks;
// and the per-thread first step of their row sums.
#pragma once
#include <cstdint>

#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/vec.cuh"

namespace ptdp::cuda {

struct NormRowConfig {
  static constexpr int kThreads = 256;        // one block per row; threads stride over h
  static constexpr int kMaxRowBlocks = 8192;  // grid-stride over rows beyond this
  static constexpr int kVec = 8;              // 16-bit elements per 128-bit access
};

// This thread's Σ f(x_j) over its W-element chunks of row xi (h), in chunk
// order (the order the block sums of the kernels fix).
template <int W, class T, class F> __device__ inline float thread_row_sum(const T* xi, std::int64_t h, F f) {
  float acc = 0.0f;
  vec::for_each_row_chunk<W>(h, [&](std::int64_t j, auto) {
    float v[W];
    vec::load<W>(xi + j, v);
    for (const float e : v) acc += f(e);
  });
  return acc;
}

// The terms of the row sums: x itself, and (x − mu)² (mu = 0 for RMSNorm's Σ x²).
struct RowValue {
  __device__ float operator()(float e) const { return e; }
};
struct SquareAbout {
  float mu;
  __device__ float operator()(float e) const { return (e - mu) * (e - mu); }
};

// Blocks for n rows.
inline unsigned norm_row_blocks(std::int64_t n) { return dev::grid_blocks(n, 1, NormRowConfig::kMaxRowBlocks); }

}  // namespace ptdp::cuda
