// Pieces of ptdp's deterministic reductions (no floating-point atomics): a
// stream-ordered scratch buffer for per-block partial sums, the block step of
// the column sums (layernorm dgamma/dbeta, RMSNorm dgamma, bias gradient), their
// launcher and the launcher of their fixed-order finishing step. Layout:
// vector_plan.h ColumnPartialsPlan.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

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

// The blocks of the column sums: kCols column threads (one warp) by kRows row
// threads, at most kMaxSlices row slices (partial rows of the workspace).
struct ColumnSumTile {
  static constexpr int kCols = 32, kRows = 8, kMaxSlices = 128;
};

// Column sums of outs.size() quantities of a (rows, cols) matrix read `width`
// columns a thread, in a fixed order: launch(grid, block, partial, stride) runs
// the block step, which writes quantity q's (slices, cols) partial sums at
// partial + q·stride (dev::store_column_partial); then outs[q] (cols) += its
// slices in order. The grid depends on the shape only: the same bits every run.
template <class Launch>
void column_sums(std::int64_t rows, std::int64_t cols, int width, std::initializer_list<float*> outs, cudaStream_t st,
                 Launch&& launch) {
  using Tile = ColumnSumTile;
  const auto plan = column_partials_plan(rows, cols, width, Tile::kCols, Tile::kRows, Tile::kMaxSlices);
  StreamScratch<float> partial(outs.size() * static_cast<std::size_t>(plan.workspace_floats), st);
  const dim3 grid(static_cast<unsigned>(plan.col_tiles), static_cast<unsigned>(plan.slices));
  launch(grid, dim3(Tile::kCols, Tile::kRows), partial.get(), plan.workspace_floats);
  PTDP_CUDA_CHECK_LAUNCH();
  std::int64_t q = 0;
  for (float* out : outs) add_column_partials(partial.get() + q++ * plan.workspace_floats, plan.slices, cols, out, st);
}

namespace dev {

// The first of the W columns this thread of a ColumnSumTile block sums.
template <int W> __device__ inline std::int64_t tile_first_col() {
  return (static_cast<std::int64_t>(blockIdx.x) * ColumnSumTile::kCols + threadIdx.x) * W;
}

// f(r) for every row r < rows of this thread's row slice, in order; none when
// its columns (from col0) lie past cols.
template <class F>
__device__ inline void for_each_slice_row(std::int64_t col0, std::int64_t rows, std::int64_t cols, F&& f) {
  if (col0 >= cols) return;
  const std::int64_t stride = slice_row_stride(gridDim.y, ColumnSumTile::kRows);
  for (std::int64_t r = slice_first_row(blockIdx.y, static_cast<int>(threadIdx.y), ColumnSumTile::kRows); r < rows;
       r += stride)
    f(r);
}

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
