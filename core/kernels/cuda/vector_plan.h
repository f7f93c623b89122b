// Launch plans of the memory-bound CUDA kernels, in plain C++ (no CUDA
// dependency, so tests/unit checks them on the CPU): the vector width a launch
// may use given its pointers and row length, and the layout of the per-block
// partial sums of the deterministic column reductions (layernorm dgamma/dbeta,
// bias gradient). Letters: rows × cols for a (rows, cols) matrix.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#ifdef __CUDACC__
#define PTDP_HOST_DEVICE __host__ __device__
#else
#define PTDP_HOST_DEVICE
#endif

namespace ptdp::cuda {

// One vector access moves 16 bytes (8 × 16-bit, 4 × fp32): the widest load a
// thread can issue as one instruction.
constexpr int kVectorBytes = 16;

// Elements of `elem_bytes` bytes in one vector access.
constexpr int vector_elems(std::size_t elem_bytes) { return static_cast<int>(kVectorBytes / elem_bytes); }

// One array a kernel reads or writes: its (row 0) address and element size.
struct Access {
  const void* ptr;
  std::size_t elem_bytes;
};

// True iff `ptr` is a multiple of `bytes` (a power of two).
inline bool aligned_to(const void* ptr, std::size_t bytes) {
  return (reinterpret_cast<std::uintptr_t>(ptr) & (bytes - 1)) == 0;
}

// Width (elements per access) for flat arrays: `width` when every array's
// address is aligned to width·elem_bytes (tails go scalar), else 1.
inline int flat_width(int width, std::initializer_list<Access> arrays) {
  for (const Access& a : arrays)
    if (!aligned_to(a.ptr, static_cast<std::size_t>(width) * a.elem_bytes)) return 1;
  return width;
}

// Width for row-major (rows, row_len) arrays whose rows are all accessed by
// vectors: flat_width, and row_len a multiple of width (so every row starts
// aligned and no vector crosses a row end), else 1.
inline int row_width(int width, std::int64_t row_len, std::initializer_list<Access> arrays) {
  if (row_len % width != 0) return 1;
  return flat_width(width, arrays);
}

// Deterministic column sums of a (rows, cols) matrix: block (x, y) of the grid
// (col_tiles, slices) sums rows y, y + slices, ... (in tiles of row_threads
// rows) over its tile of tile_cols columns into partial row y of a (slices,
// cols) fp32 workspace; a second kernel adds the slices in order 0, 1, ...
// The grid depends on the shape only, so the sum order, and the result, is
// the same on every run.
struct ColumnPartialsPlan {
  std::int64_t col_tiles = 0;   // blocks along the columns
  std::int64_t slices = 0;      // blocks along the rows (partial rows of the workspace)
  std::int64_t tile_cols = 0;   // columns of one block: col_threads · width
  std::int64_t workspace_floats = 0;  // slices · cols per summed quantity
};

inline ColumnPartialsPlan column_partials_plan(std::int64_t rows, std::int64_t cols, int width, int col_threads,
                                               int row_threads, int max_slices) {
  ColumnPartialsPlan p;
  p.tile_cols = static_cast<std::int64_t>(col_threads) * width;
  p.col_tiles = std::max<std::int64_t>(1, (cols + p.tile_cols - 1) / p.tile_cols);
  p.slices = std::clamp<std::int64_t>((rows + row_threads - 1) / row_threads, 1, max_slices);
  p.workspace_floats = p.slices * cols;
  return p;
}

// First row of thread row `ty` in slice `slice`, and the stride between its
// rows: thread rows of all slices interleave over the matrix rows.
PTDP_HOST_DEVICE constexpr std::int64_t slice_first_row(std::int64_t slice, int ty, int row_threads) {
  return slice * row_threads + ty;
}
PTDP_HOST_DEVICE constexpr std::int64_t slice_row_stride(std::int64_t slices, int row_threads) {
  return slices * row_threads;
}

// Bits a radix sort must look at for keys in [0, vt] (the deterministic
// embedding backward sorts shard rows, with vt marking tokens outside the shard).
constexpr int sort_key_bits(std::int64_t vt) {
  int bits = 1;
  while (bits < 32 && (std::int64_t{1} << bits) <= vt) ++bits;
  return bits;
}

}  // namespace ptdp::cuda
