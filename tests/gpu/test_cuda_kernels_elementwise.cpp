// GPU tests of the element-wise CUDA kernels (elementwise.cu): GeLU, fused
// bias+GeLU, add, bias add and gradient, scale, sum of squares, casts; each in
// bf16 and fp16 (scale and casts also fp32) against the fp32 CPU reference on
// the same (T-representable) inputs.
// Letters: n elements; rows × m for biased matrices (sizes off every block multiple).
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

namespace ptdp {
namespace {

using gputest::DeviceBuffer;

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

constexpr std::int64_t kN = 100003;  // not a multiple of any block size
constexpr std::int64_t kRows = 1037, kM = 100;

TYPED_TEST(CudaElementwise, GeluForwardMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(101);
  const auto x = gputest::random_values<T>(rng, kN, 2.0f);
  DeviceBuffer<T> d_x(gputest::to_type<T>(x)), d_y(kN);
  cuda::gelu_forward(d_x.get(), kN, d_y.get(), nullptr);
  std::vector<float> ref(kN);
  cpu::gelu_forward(x.data(), kN, ref.data());
  gputest::expect_close<T>(got(d_y), ref, gputest::elementwise<T>(), "gelu_forward y");
}

TYPED_TEST(CudaElementwise, GeluBackwardMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(102);
  const auto x = gputest::random_values<T>(rng, kN, 2.0f);
  const auto dy = gputest::random_values<T>(rng, kN);
  DeviceBuffer<T> d_x(gputest::to_type<T>(x)), d_dy(gputest::to_type<T>(dy)), d_dx(kN);
  cuda::gelu_backward(d_dy.get(), d_x.get(), kN, d_dx.get(), nullptr);
  std::vector<float> ref(kN);
  cpu::gelu_backward(dy.data(), x.data(), kN, ref.data());
  gputest::expect_close<T>(got(d_dx), ref, gputest::elementwise<T>(), "gelu_backward dx");
}

// pre := pre + bias rounded to T; y = gelu of that rounded pre (what the
// unfused bias_add then gelu_forward would store).
TYPED_TEST(CudaElementwise, BiasGeluForwardMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(103);
  const auto pre = gputest::random_values<T>(rng, kRows * kM, 2.0f);
  const auto bias = gputest::random_values<T>(rng, kM);
  DeviceBuffer<T> d_pre(gputest::to_type<T>(pre)), d_bias(gputest::to_type<T>(bias)), d_y(kRows * kM);
  cuda::bias_gelu_forward(d_pre.get(), d_bias.get(), kRows, kM, d_y.get(), nullptr);
  std::vector<float> ref_pre = pre, ref_y(pre.size());
  cpu::bias_add(ref_pre.data(), bias.data(), kRows, kM);
  for (auto& p : ref_pre) p = gputest::round_to<T>(p);
  cpu::gelu_forward(ref_pre.data(), kRows * kM, ref_y.data());
  gputest::expect_close<T>(got(d_pre), ref_pre, gputest::elementwise<T>(), "bias_gelu_forward pre");
  gputest::expect_close<T>(got(d_y), ref_y, gputest::elementwise<T>(), "bias_gelu_forward y");
}

TYPED_TEST(CudaElementwise, AddMatchesCpuAlsoInPlace) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(104);
  const auto a = gputest::random_values<T>(rng, kN), b = gputest::random_values<T>(rng, kN);
  DeviceBuffer<T> d_a(gputest::to_type<T>(a)), d_b(gputest::to_type<T>(b)), d_out(kN);
  std::vector<float> ref(kN);
  cpu::add(a.data(), b.data(), kN, ref.data());
  cuda::add(d_a.get(), d_b.get(), kN, d_out.get(), nullptr);
  gputest::expect_close<T>(got(d_out), ref, gputest::elementwise<T>(), "add out");
  cuda::add(d_a.get(), d_b.get(), kN, d_a.get(), nullptr);  // out aliases a
  gputest::expect_close<T>(got(d_a), ref, gputest::elementwise<T>(), "add in place");
}

TYPED_TEST(CudaElementwise, BiasAddMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(105);
  const auto y = gputest::random_values<T>(rng, kRows * kM), bias = gputest::random_values<T>(rng, kM);
  DeviceBuffer<T> d_y(gputest::to_type<T>(y)), d_bias(gputest::to_type<T>(bias));
  cuda::bias_add(d_y.get(), d_bias.get(), kRows, kM, nullptr);
  std::vector<float> ref = y;
  cpu::bias_add(ref.data(), bias.data(), kRows, kM);
  gputest::expect_close<T>(got(d_y), ref, gputest::elementwise<T>(), "bias_add y");
}

// dbias starts non-zero: the kernel must add (+=) the column sums of dy.
TYPED_TEST(CudaElementwise, BiasBackwardAccumulatesLikeCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(106);
  const auto dy = gputest::random_values<T>(rng, kRows * kM);
  const auto dbias0 = gputest::random_values<float>(rng, kM);
  DeviceBuffer<T> d_dy(gputest::to_type<T>(dy));
  DeviceBuffer<float> d_dbias(dbias0);
  cuda::bias_backward(d_dy.get(), kRows, kM, d_dbias.get(), nullptr);
  std::vector<float> ref = dbias0;
  cpu::bias_backward(dy.data(), kRows, kM, ref.data());
  gputest::expect_close<float>(got(d_dbias), ref, gputest::fp32_reduction(kRows), "bias_backward dbias");
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
  const auto x = gputest::random_values<T>(rng, kN);
  DeviceBuffer<T> d_x(gputest::to_type<T>(x));
  cuda::scale(d_x.get(), kN, alpha, nullptr);
  std::vector<float> ref = x;
  cpu::scale(ref.data(), kN, alpha);
  gputest::expect_close<T>(got(d_x), ref, gputest::elementwise<T>(), "scale x");
}

TYPED_TEST(CudaAnyType, CastFromFloatRoundsToNearest) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(107);
  const auto src = gputest::random_values<float>(rng, kN, 3.0f);  // not representable in T
  DeviceBuffer<float> d_src(src);
  DeviceBuffer<T> d_dst(kN);
  cuda::cast_from_float(d_src.get(), kN, d_dst.get(), nullptr);
  gputest::expect_close<T>(got(d_dst), src, gputest::elementwise<T>(), "cast_from_float");
}

TYPED_TEST(CudaAnyType, CastToFloatIsExact) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(108);
  const auto src = gputest::random_values<T>(rng, kN, 3.0f);
  DeviceBuffer<T> d_src(gputest::to_type<T>(src));
  DeviceBuffer<float> d_dst(kN);
  cuda::cast_to_float(d_src.get(), kN, d_dst.get(), nullptr);
  gputest::expect_close<float>(got(d_dst), src, gputest::elementwise<float>(), "cast_to_float");
}

// *out is written (its poison is overwritten), twice to the same value; the
// fp32 part of the sum is one block's (256 threads × ≤ 2 elements at this n,
// so k = 512 for the tolerance), blocks are added in fp64.
TEST(CudaSumSquares, MatchesCpuAndOverwrites) {
  PTDP_REQUIRE_GPU();
  constexpr std::int64_t n = 1500007;
  std::mt19937 rng(110);
  const auto x = gputest::random_values<float>(rng, n);
  DeviceBuffer<float> d_x(x);
  DeviceBuffer<double> d_out(1);
  const double ref = cpu::sum_squares(x.data(), n);
  for (int call = 0; call < 2; ++call) {
    cuda::sum_squares(d_x.get(), n, d_out.get(), nullptr);
    const double result = d_out.download()[0];
    gputest::expect_close<float>({static_cast<float>(result)}, {static_cast<float>(ref)}, gputest::fp32_reduction(512),
                                 "sum_squares call " + std::to_string(call));
  }
}

}  // namespace
}  // namespace ptdp
