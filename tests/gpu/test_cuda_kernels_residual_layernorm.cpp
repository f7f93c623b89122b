// GPU tests of the residual add fused into layernorm (bias_residual_layernorm,
// layernorm.cu), bf16 and fp16: bitwise equal to the unfused pair of CUDA
// kernels (bias_residual_add, then layernorm_forward) on the same buffers,
// whatever the sum aliases (the fusion is exact by construction: the kernel
// normalises the rounded sum with layernorm_forward's summation order), and
// close to the fp32 CPU reference (sum rounded once, then
// cpu::layernorm_forward). Letters: n rows (tokens), h hidden.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/kernels/cpu/layernorm.h"
#include "core/kernels/cuda/kernels.h"
#include "tests/gpu/gpu_test.h"
#include "tests/gpu/gpu_views.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;
using gputest::OffsetBuffer;
using gputest::TypeNames;
using gputest::Types16;

template <class T> class CudaResidualLayernorm : public ::testing::Test {};
TYPED_TEST_SUITE(CudaResidualLayernorm, Types16, TypeNames);

// in_offset: elements past an aligned allocation of y, bias, residual;
// out_offset: of sum and ln. An offset of 1 makes that view unaligned.
struct Case {
  std::int64_t n, h;
  std::size_t in_offset, out_offset;
};
constexpr Case kCases[] = {
    {37, 100, 0, 0},    // scalar: h not a multiple of 8
    {600, 1030, 0, 0},  // scalar, h > one block of threads
    {64, 1024, 0, 0},   // 128-bit accesses throughout
    {48, 520, 1, 1},    // every view unaligned: scalar
    {48, 520, 1, 0},    // inputs unaligned, sum and ln aligned: 8-wide order, scalar loads
    {8200, 1024, 0, 0}, // rows beyond the 8192-block grid, 128-bit
};
constexpr float kEps = 1e-5f;

std::string name(const char* what, Case c) {
  return std::string(what) + " (n " + std::to_string(c.n) + ", h " + std::to_string(c.h) + ", offsets " +
         std::to_string(c.in_offset) + "/" + std::to_string(c.out_offset) + ")";
}

enum class Alias { none, y, residual };  // what the sum is written over

// Host inputs of one case and the device buffers of one run.
template <class T> struct Run {
  std::vector<float> y, bias, residual, gamma, beta;
  Case c;
  Run(std::mt19937& rng, Case k)
      : y(gputest::random_values<T>(rng, k.n * k.h, 2.0f)),
        bias(gputest::random_values<T>(rng, k.h, 0.5f)),
        residual(gputest::random_values<T>(rng, k.n * k.h, 2.0f)),
        gamma(gputest::random_values<T>(rng, k.h, 0.5f)),
        beta(gputest::random_values<T>(rng, k.h)),
        c(k) {
    for (auto& v : residual) v = gputest::round_to<T>(v + 0.75f);  // a non-zero mean
    for (auto& g : gamma) g = gputest::round_to<T>(g + 1.0f);
  }

  struct Out {
    std::vector<T> sum, ln;
    std::vector<float> mean, rstd;
  };

  // fused: one bias_residual_layernorm; else bias_residual_add then
  // layernorm_forward, on buffers of the same alignment and aliasing.
  Out run(bool fused, Alias alias) const {
    const std::size_t nh = static_cast<std::size_t>(c.n * c.h);
    OffsetBuffer<T> d_y(gputest::to_type<T>(y), c.in_offset), d_r(gputest::to_type<T>(residual), c.in_offset);
    OffsetBuffer<T> d_bias(gputest::to_type<T>(bias), c.in_offset);
    OffsetBuffer<T> d_sum(nh, c.out_offset), d_ln(nh, c.out_offset);
    DeviceBuffer<T> d_gamma(gputest::to_type<T>(gamma)), d_beta(gputest::to_type<T>(beta));
    DeviceBuffer<float> d_mean(c.n), d_rstd(c.n);
    const OffsetBuffer<T>& sum_buf = alias == Alias::y ? d_y : alias == Alias::residual ? d_r : d_sum;
    T* sum = sum_buf.get();
    if (fused) {
      cuda::bias_residual_layernorm(d_y.get(), d_bias.get(), d_r.get(), d_gamma.get(), d_beta.get(), c.n, c.h, kEps,
                                    sum, d_ln.get(), d_mean.get(), d_rstd.get(), nullptr);
    } else {
      cuda::bias_residual_add(d_y.get(), d_bias.get(), d_r.get(), c.n, c.h, sum, nullptr);
      cuda::layernorm_forward(sum, d_gamma.get(), d_beta.get(), c.n, c.h, kEps, d_ln.get(), d_mean.get(),
                              d_rstd.get(), nullptr);
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return {sum_buf.download(), d_ln.download(), d_mean.download(), d_rstd.download()};
  }
};

TYPED_TEST(CudaResidualLayernorm, FusedIsBitwiseTheUnfusedPairWhateverTheSumAliases) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(301);
  for (const Case c : kCases) {
    const Run<T> in(rng, c);
    for (const Alias alias : {Alias::none, Alias::y, Alias::residual}) {
      const auto fused = in.run(true, alias), unfused = in.run(false, alias);
      const std::string tag = alias == Alias::none ? "" : alias == Alias::y ? " over y" : " over residual";
      gputest::expect_bitwise_equal(fused.sum, unfused.sum, name(("sum" + tag).c_str(), c));
      gputest::expect_bitwise_equal(fused.ln, unfused.ln, name(("ln" + tag).c_str(), c));
      gputest::expect_bitwise_equal(fused.mean, unfused.mean, name(("mean" + tag).c_str(), c));
      gputest::expect_bitwise_equal(fused.rstd, unfused.rstd, name(("rstd" + tag).c_str(), c));
    }
  }
}

// The CPU reference: sum = (y + bias) + residual in fp32 rounded to T once,
// then the fp32 layernorm of that rounded sum.
TYPED_TEST(CudaResidualLayernorm, FusedMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(302);
  for (const Case c : kCases) {
    const Run<T> in(rng, c);
    std::vector<float> sum(in.y.size()), ln(in.y.size()), mean(c.n), rstd(c.n);
    for (std::size_t i = 0; i < sum.size(); ++i)
      sum[i] = gputest::round_to<T>(in.y[i] + in.bias[i % static_cast<std::size_t>(c.h)] + in.residual[i]);
    cpu::layernorm_forward(sum.data(), in.gamma.data(), in.beta.data(), c.n, c.h, kEps, ln.data(), mean.data(),
                           rstd.data());
    const auto out = in.run(true, Alias::none);
    gputest::expect_close<T>(gputest::to_floats(out.sum), sum, gputest::elementwise<T>(), name("sum", c));
    gputest::expect_close<T>(gputest::to_floats(out.ln), ln, gputest::reduction<T>(static_cast<double>(c.h)),
                             name("ln", c));
    const auto stats_tol = gputest::fp32_reduction(static_cast<double>(c.h));
    gputest::expect_close<float>(out.mean, mean, stats_tol, name("mean", c));
    gputest::expect_close<float>(out.rstd, rstd, stats_tol, name("rstd", c));
  }
}

}  // namespace
}  // namespace ptdp
