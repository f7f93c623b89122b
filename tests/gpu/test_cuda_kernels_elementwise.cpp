// GPU tests of the element-wise CUDA kernels (elementwise.cu): GeLU, fused
// bias+GeLU, add, bias add and gradient, scale, sum of squares, casts; each in
// bf16 and fp16 (scale and casts also fp32) against the fp32 CPU reference on
// the same (T-representable) inputs.
// Letters: n elements; rows × m for biased matrices. Cases cover the 128-bit
// path with a scalar tail, views offset by one element (scalar path), biased
// rows whose m is not a multiple of 8 (scalar), and sizes beyond one grid
// (grid-stride rounds); the two sums must be bitwise the same on a second run.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/kernels/cpu/bias.h"
#include "core/kernels/cpu/elementwise.h"
#include "core/kernels/cuda/kernels.h"
#include "tests/gpu/gpu_test.h"
#include "tests/gpu/gpu_views.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;
using gputest::OffsetBuffer;

struct TypeNames {
  template <class T> static std::string GetName(int) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) return "bf16";
    if constexpr (std::is_same_v<T, __half>) return "fp16";
    return "fp32";
  }
};

using gputest::got;
using gputest::Types16;

template <class T> class CudaElementwise : public ::testing::Test {};
TYPED_TEST_SUITE(CudaElementwise, Types16, TypeNames);

// Flat arrays: n elements starting `offset` elements past an aligned allocation.
struct Flat {
  std::int64_t n;
  std::size_t offset;
};
constexpr Flat kFlat[] = {
    {13, 0},       // one vector and a 5-element tail
    {100003, 0},   // vectors and a tail
    {1001, 1},     // unaligned view: scalar
    {8388617, 0},  // beyond 4096 blocks × 256 threads × 8: a second grid-stride round
};
// Biased (rows, m) matrices; with m a multiple of 8 the rows go by vectors.
struct Biased {
  std::int64_t rows, m;
  std::size_t offset;
};
constexpr Biased kBiased[] = {
    {1037, 100, 0},   // m not a multiple of 8: scalar
    {515, 264, 0},    // 128-bit accesses
    {300, 64, 1},     // unaligned view: scalar
    {33000, 256, 0},  // beyond one grid; bias gradient slices stride over rows
};

std::string name(const char* what, Flat c) {
  return std::string(what) + " (n " + std::to_string(c.n) + ", offset " + std::to_string(c.offset) + ")";
}
std::string name(const char* what, Biased c) {
  return std::string(what) + " (rows " + std::to_string(c.rows) + ", m " + std::to_string(c.m) + ", offset " +
         std::to_string(c.offset) + ")";
}

TYPED_TEST(CudaElementwise, GeluForwardMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(101);
  for (const Flat c : kFlat) {
    const auto x = gputest::random_values<T>(rng, c.n, 2.0f);
    OffsetBuffer<T> d_x(gputest::to_type<T>(x), c.offset), d_y(c.n, c.offset);
    cuda::gelu_forward(d_x.get(), c.n, d_y.get(), nullptr);
    std::vector<float> ref(c.n);
    cpu::gelu_forward(x.data(), c.n, ref.data());
    gputest::expect_close<T>(got(d_y), ref, gputest::elementwise<T>(), name("gelu_forward y", c));
  }
}

TYPED_TEST(CudaElementwise, GeluBackwardMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(102);
  for (const Flat c : kFlat) {
    const auto x = gputest::random_values<T>(rng, c.n, 2.0f);
    const auto dy = gputest::random_values<T>(rng, c.n);
    OffsetBuffer<T> d_x(gputest::to_type<T>(x), c.offset), d_dy(gputest::to_type<T>(dy), c.offset);
    OffsetBuffer<T> d_dx(c.n, c.offset);
    cuda::gelu_backward(d_dy.get(), d_x.get(), c.n, d_dx.get(), nullptr);
    std::vector<float> ref(c.n);
    cpu::gelu_backward(dy.data(), x.data(), c.n, ref.data());
    gputest::expect_close<T>(got(d_dx), ref, gputest::elementwise<T>(), name("gelu_backward dx", c));
  }
}

// pre := pre + bias rounded to T; y = gelu of that rounded pre (what the
// unfused bias_add then gelu_forward would store).
TYPED_TEST(CudaElementwise, BiasGeluForwardMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(103);
  for (const Biased c : kBiased) {
    const auto pre = gputest::random_values<T>(rng, c.rows * c.m, 2.0f);
    const auto bias = gputest::random_values<T>(rng, c.m);
    OffsetBuffer<T> d_pre(gputest::to_type<T>(pre), c.offset), d_y(c.rows * c.m, c.offset);
    DeviceBuffer<T> d_bias(gputest::to_type<T>(bias));
    cuda::bias_gelu_forward(d_pre.get(), d_bias.get(), c.rows, c.m, d_y.get(), nullptr);
    std::vector<float> ref_pre = pre, ref_y(pre.size());
    cpu::bias_add(ref_pre.data(), bias.data(), c.rows, c.m);
    for (auto& p : ref_pre) p = gputest::round_to<T>(p);
    cpu::gelu_forward(ref_pre.data(), c.rows * c.m, ref_y.data());
    gputest::expect_close<T>(got(d_pre), ref_pre, gputest::elementwise<T>(), name("bias_gelu_forward pre", c));
    gputest::expect_close<T>(got(d_y), ref_y, gputest::elementwise<T>(), name("bias_gelu_forward y", c));
  }
}

TYPED_TEST(CudaElementwise, AddMatchesCpuAlsoInPlace) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(104);
  for (const Flat c : kFlat) {
    const auto a = gputest::random_values<T>(rng, c.n), b = gputest::random_values<T>(rng, c.n);
    OffsetBuffer<T> d_a(gputest::to_type<T>(a), c.offset), d_b(gputest::to_type<T>(b), c.offset);
    OffsetBuffer<T> d_out(c.n, c.offset);
    std::vector<float> ref(c.n);
    cpu::add(a.data(), b.data(), c.n, ref.data());
    cuda::add(d_a.get(), d_b.get(), c.n, d_out.get(), nullptr);
    gputest::expect_close<T>(got(d_out), ref, gputest::elementwise<T>(), name("add out", c));
    cuda::add(d_a.get(), d_b.get(), c.n, d_a.get(), nullptr);  // out aliases a
    gputest::expect_close<T>(got(d_a), ref, gputest::elementwise<T>(), name("add in place", c));
  }
}

TYPED_TEST(CudaElementwise, BiasAddMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(105);
  for (const Biased c : kBiased) {
    const auto y = gputest::random_values<T>(rng, c.rows * c.m), bias = gputest::random_values<T>(rng, c.m);
    OffsetBuffer<T> d_y(gputest::to_type<T>(y), c.offset);
    DeviceBuffer<T> d_bias(gputest::to_type<T>(bias));
    cuda::bias_add(d_y.get(), d_bias.get(), c.rows, c.m, nullptr);
    std::vector<float> ref = y;
    cpu::bias_add(ref.data(), bias.data(), c.rows, c.m);
    gputest::expect_close<T>(got(d_y), ref, gputest::elementwise<T>(), name("bias_add y", c));
  }
}

// dbias starts non-zero: the kernel must add (+=) the column sums of dy; a
// second run from the same start gives the same bits (fixed-order sums).
TYPED_TEST(CudaElementwise, BiasBackwardAccumulatesLikeCpuAndRepeats) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(106);
  for (const Biased c : kBiased) {
    const auto dy = gputest::random_values<T>(rng, c.rows * c.m);
    const auto dbias0 = gputest::random_values<float>(rng, c.m);
    OffsetBuffer<T> d_dy(gputest::to_type<T>(dy), c.offset);
    std::vector<float> runs[2];
    for (auto& run : runs) {
      DeviceBuffer<float> d_dbias(dbias0);
      cuda::bias_backward(d_dy.get(), c.rows, c.m, d_dbias.get(), nullptr);
      run = d_dbias.download();
    }
    std::vector<float> ref = dbias0;
    cpu::bias_backward(dy.data(), c.rows, c.m, ref.data());
    gputest::expect_close<float>(runs[0], ref, gputest::fp32_reduction(static_cast<double>(c.rows)),
                                 name("bias_backward dbias", c));
    gputest::expect_bitwise_equal(runs[0], runs[1], name("bias_backward run to run", c));
  }
}

// scale and the casts exist for fp32 too (gradients are scaled in fp32; a cast
// to fp32 is a copy).
template <class T> class CudaAnyType : public ::testing::Test {};
using TypesAll = ::testing::Types<float, __nv_bfloat16, __half>;
TYPED_TEST_SUITE(CudaAnyType, TypesAll, TypeNames);

TYPED_TEST(CudaAnyType, ScaleMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(109);
  const float alpha = -0.37f;
  for (const Flat c : kFlat) {
    const auto x = gputest::random_values<T>(rng, c.n);
    OffsetBuffer<T> d_x(gputest::to_type<T>(x), c.offset);
    cuda::scale(d_x.get(), c.n, alpha, nullptr);
    std::vector<float> ref = x;
    cpu::scale(ref.data(), c.n, alpha);
    gputest::expect_close<T>(got(d_x), ref, gputest::elementwise<T>(), name("scale x", c));
  }
}

TYPED_TEST(CudaAnyType, CastFromFloatRoundsToNearest) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(107);
  for (const Flat c : kFlat) {
    const auto src = gputest::random_values<float>(rng, c.n, 3.0f);  // not representable in T
    OffsetBuffer<float> d_src(src, c.offset);
    OffsetBuffer<T> d_dst(c.n, c.offset);
    cuda::cast_from_float(d_src.get(), c.n, d_dst.get(), nullptr);
    gputest::expect_close<T>(got(d_dst), src, gputest::elementwise<T>(), name("cast_from_float", c));
  }
}

TYPED_TEST(CudaAnyType, CastToFloatIsExact) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(108);
  for (const Flat c : kFlat) {
    const auto src = gputest::random_values<T>(rng, c.n, 3.0f);
    OffsetBuffer<T> d_src(gputest::to_type<T>(src), c.offset);
    OffsetBuffer<float> d_dst(c.n, c.offset);
    cuda::cast_to_float(d_src.get(), c.n, d_dst.get(), nullptr);
    gputest::expect_close<float>(got(d_dst), src, gputest::elementwise<float>(), name("cast_to_float", c));
  }
}

// *out is written (its poison is overwritten), twice to the same bits. The
// fp32 part of the sum is one block's: at most 1024 blocks of 256 threads, so
// at n = 1.5M a thread adds at most 2 chunks of 4 floats and a block k = 2048
// elements (the tolerance); blocks are added in fp64.
TEST(CudaSumSquares, MatchesCpuOverwritesAndRepeats) {
  PTDP_REQUIRE_GPU();
  constexpr std::int64_t n = 1500007;
  std::mt19937 rng(110);
  const auto x = gputest::random_values<float>(rng, n);
  const double ref = cpu::sum_squares(x.data(), n);
  for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {  // 128-bit path and an unaligned view
    OffsetBuffer<float> d_x(x, offset);
    DeviceBuffer<double> d_out(1);
    std::vector<double> results;
    for (int call = 0; call < 2; ++call) {
      cuda::sum_squares(d_x.get(), n, d_out.get(), nullptr);
      results.push_back(d_out.download()[0]);
      gputest::expect_close<float>({static_cast<float>(results.back())}, {static_cast<float>(ref)},
                                   gputest::fp32_reduction(2048),
                                   "sum_squares offset " + std::to_string(offset) + " call " + std::to_string(call));
    }
    gputest::expect_bitwise_equal(std::vector<double>{results[0]}, std::vector<double>{results[1]},
                                  "sum_squares run to run, offset " + std::to_string(offset));
  }
}

}  // namespace
}  // namespace ptdp
