// Launch plans of the memory-bound CUDA kernels (core/kernels/cuda/vector_plan.h),
// checked on the CPU: when a launch may use 128-bit accesses, the layout of the
// deterministic column sums (every matrix element in exactly one block and
// thread row), and the radix-sort key width of the deterministic embedding backward.
// Letters: rows × cols for a (rows, cols) matrix.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/kernels/cuda/vector_plan.h"

namespace ptdp::cuda {
namespace {

// 16-bit elements stand in as std::uint16_t (same size and alignment as bf16/fp16).
using U16 = std::uint16_t;

TEST(VectorPlan, ElementsPerAccess) {
  EXPECT_EQ(vector_elems(2), 8);
  EXPECT_EQ(vector_elems(4), 4);
  EXPECT_EQ(vector_elems(8), 2);
}

TEST(VectorPlan, FlatWidthNeedsEveryPointerAligned) {
  alignas(16) U16 a[64] = {};
  alignas(16) U16 b[64] = {};
  EXPECT_EQ(flat_width(8, {{a, 2}, {b, 2}}), 8);
  EXPECT_EQ(flat_width(8, {{a + 8, 2}, {b + 16, 2}}), 8);  // still 16-byte aligned
  EXPECT_EQ(flat_width(8, {{a + 1, 2}, {b, 2}}), 1);       // a view offset by one element
  EXPECT_EQ(flat_width(8, {{a, 2}, {b + 4, 2}}), 1);       // 8-byte aligned is not enough
  alignas(16) float f[16] = {};
  EXPECT_EQ(flat_width(4, {{f, 4}, {a, 2}}), 4);           // a cast: 4 floats, 4 halves
  EXPECT_EQ(flat_width(4, {{f, 4}, {a + 4, 2}}), 4);       // 4 halves need 8 bytes only
  EXPECT_EQ(flat_width(4, {{f + 2, 4}, {a, 2}}), 1);
}

TEST(VectorPlan, RowWidthNeedsRowLengthMultiple) {
  alignas(16) U16 x[2048] = {};
  EXPECT_EQ(row_width(8, 1024, {{x, 2}}), 8);
  EXPECT_EQ(row_width(8, 1032, {{x, 2}}), 8);
  EXPECT_EQ(row_width(8, 100, {{x, 2}}), 1);   // row 1 would start 8-byte aligned
  EXPECT_EQ(row_width(8, 1030, {{x, 2}}), 1);
  EXPECT_EQ(row_width(8, 1024, {{x + 1, 2}}), 1);
  EXPECT_EQ(row_width(8, 7, {{x, 2}}), 1);     // shorter than one vector
}

// Every (row, col) of the matrix is read by exactly one (tile, slice, thread
// row, thread column) of the grid the plan gives, as the kernels index it.
void expect_exact_cover(std::int64_t rows, std::int64_t cols, int width) {
  constexpr int kColThreads = 32, kRowThreads = 8, kMaxSlices = 128;
  const auto plan = column_partials_plan(rows, cols, width, kColThreads, kRowThreads, kMaxSlices);
  EXPECT_GE(plan.slices, 1);
  EXPECT_LE(plan.slices, kMaxSlices);
  EXPECT_EQ(plan.workspace_floats, plan.slices * cols);
  std::vector<int> seen(static_cast<std::size_t>(rows * cols), 0);
  for (std::int64_t tile = 0; tile < plan.col_tiles; ++tile)
    for (std::int64_t slice = 0; slice < plan.slices; ++slice)
      for (int ty = 0; ty < kRowThreads; ++ty)
        for (int tx = 0; tx < kColThreads; ++tx) {
          const std::int64_t col0 = (tile * kColThreads + tx) * width;
          if (col0 >= cols) continue;
          for (std::int64_t r = slice_first_row(slice, ty, kRowThreads); r < rows;
               r += slice_row_stride(plan.slices, kRowThreads))
            for (int k = 0; k < width && col0 + k < cols; ++k) ++seen[r * cols + col0 + k];
        }
  for (std::size_t i = 0; i < seen.size(); ++i)
    ASSERT_EQ(seen[i], 1) << "rows " << rows << " cols " << cols << " width " << width << ": element " << i;
}

TEST(VectorPlan, ColumnPartialsCoverEveryElementOnce) {
  expect_exact_cover(1, 1, 1);
  expect_exact_cover(37, 100, 1);
  expect_exact_cover(600, 1030, 1);
  expect_exact_cover(600, 1024, 8);
  expect_exact_cover(2000, 264, 8);  // more rows than slices·row threads: rows stride
}

TEST(VectorPlan, ColumnPartialsGridDependsOnShapeOnly) {
  const auto p = column_partials_plan(4096, 3072, 8, 32, 8, 128);
  EXPECT_EQ(p.tile_cols, 256);
  EXPECT_EQ(p.col_tiles, 12);
  EXPECT_EQ(p.slices, 128);  // clamped: 4096 rows / 8 thread rows = 512 slices wanted
  const auto small = column_partials_plan(5, 3, 1, 32, 8, 128);
  EXPECT_EQ(small.col_tiles, 1);
  EXPECT_EQ(small.slices, 1);
}

TEST(VectorPlan, SortKeyBitsHoldEveryKey) {
  EXPECT_EQ(sort_key_bits(0), 1);
  EXPECT_EQ(sort_key_bits(1), 1);
  EXPECT_EQ(sort_key_bits(2), 2);
  EXPECT_EQ(sort_key_bits(255), 8);
  EXPECT_EQ(sort_key_bits(256), 9);
  EXPECT_EQ(sort_key_bits(50257), 16);
  for (std::int64_t vt : {1, 7, 8, 1000, 25216, 65535, 65536})
    EXPECT_LT(vt, std::int64_t{1} << sort_key_bits(vt)) << "Vt " << vt;
}

}  // namespace
}  // namespace ptdp::cuda
