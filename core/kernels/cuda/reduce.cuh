// Pieces of ptdp's deterministic reductions (no floating-point atomics): a
// stream-ordered scratch buffer for per-block partial sums, the block step of
// the column sums (layernorm dgamma/dbeta, bias gradient) and the launcher of
// their fixed-order finishing step. Layout: vector_plan.h ColumnPartialsPlan.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/vector_plan.h"

namespace ptdp::cuda {

// `count` elements of T allocated on `st` (cudaMallocAsync, the device's
// stream-ordered pool) and freed on `st` at scope exit, after the kernels
// queued before it have used them.
template <class T> class StreamScratch {
 public:
  StreamScratch(std::size_t count, cudaStream_t st) : st_(st) {
    PTDP_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&ptr_), std::max<std::size_t>(count, 1) * sizeof(T), st));
  }
  ~StreamScratch() { cudaFreeAsync(ptr_, st_); }  // a failure here resurfaces at the next checked call
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  T* get() const { return ptr_; }

 private:
  T* ptr_ = nullptr;
  cudaStream_t st_;
};

// out (cols) += Σ_s partial (slices, cols), s in order 0, 1, ...: one thread a column.
void add_column_partials(const float* partial, std::int64_t slices, std::int64_t cols, float* out, cudaStream_t st);

namespace dev {

// Block (kCols, kRows): sums each thread's acc[k] (its column col0 + k) over
// threadIdx.y in order 0..kRows−1 and writes the block's sums to row
// blockIdx.y of partial (slices, cols). Columns ≥ cols are dropped. Every
// thread of the block calls it; safe to call repeatedly (leading barrier).
template <int kCols, int kRows, int W>
__device__ inline void store_column_partial(const float (&acc)[W], std::int64_t col0, std::int64_t cols,
                                            float* partial) {
  __shared__ float tile[kRows][kCols * W];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < W; ++k) tile[threadIdx.y][threadIdx.x * W + k] = acc[k];
  __syncthreads();
  if (threadIdx.y != 0) return;
  float* row = partial + static_cast<std::int64_t>(blockIdx.y) * cols;
#pragma unroll
  for (int k = 0; k < W; ++k) {
    if (col0 + k >= cols) break;
    float sum = 0.0f;
    for (int r = 0; r < kRows; ++r) sum += tile[r][threadIdx.x * W + k];
    row[col0 + k] = sum;
  }
}

}  // namespace dev
}  // namespace ptdp::cuda
