// GPU tests of the fused causal attention (flash_attention.cu), bf16 and fp16:
// out, lse and dqkv against the fp32 CPU reference (core/kernels/cpu/attention.h)
// on shapes whose s is not a multiple of the 32-row tile, and causality (a later
// token's k, v leave earlier rows bit for bit unchanged).
// Letters: b micro-batch, s sequence, a heads, d head dim; qkv (b, s, a, 3, d),
// out (b, s, a, d), lse (b, a, s).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/kernels/cpu/attention.h"
#include "core/kernels/cuda/kernels.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;

using gputest::TypeNames;
using gputest::Types16;

struct Shape {
  std::int64_t b, s, a, d;
  std::int64_t qkv() const { return b * s * a * 3 * d; }
  std::int64_t out() const { return b * s * a * d; }
  std::int64_t lse() const { return b * a * s; }
};
// s = 1, 17, 33, 100, 257 end inside a tile; d = 20 and 80 leave padded head columns.
constexpr Shape kShapes[] = {{1, 1, 1, 32},   {2, 17, 3, 64},  {1, 64, 2, 128}, {2, 100, 2, 32},
                             {1, 257, 2, 64}, {2, 257, 1, 128}, {1, 100, 3, 80}, {3, 33, 2, 20}};

std::string name(const char* what, const Shape& x) {
  return std::string(what) + " (b " + std::to_string(x.b) + ", s " + std::to_string(x.s) + ", a " +
         std::to_string(x.a) + ", d " + std::to_string(x.d) + ")";
}

using gputest::got;
std::vector<float> got(const DeviceBuffer<float>& buf) { return buf.download(); }

void expect_no_cuda_error() { ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "a kernel failed while running"; }

// lse[ib, ih, t] = log Σ_{u ≤ t} exp(q_t·k_u / sqrt(d)), in double from the same inputs.
std::vector<float> lse_reference(const std::vector<float>& qkv, const Shape& x) {
  std::vector<float> lse(x.lse());
  std::vector<double> z(x.s);
  const double scale = 1.0 / std::sqrt(static_cast<double>(x.d));
  for (std::int64_t ib = 0; ib < x.b; ++ib) {
    for (std::int64_t ih = 0; ih < x.a; ++ih) {
      const auto at = [&](std::int64_t t, int c) { return qkv.data() + ((ib * x.s + t) * x.a + ih) * 3 * x.d + c * x.d; };
      for (std::int64_t t = 0; t < x.s; ++t) {
        double mx = -INFINITY, sum = 0;
        for (std::int64_t u = 0; u <= t; ++u) {
          double dot = 0;
          for (std::int64_t e = 0; e < x.d; ++e) dot += static_cast<double>(at(t, 0)[e]) * at(u, 1)[e];
          z[u] = dot * scale;
          mx = std::max(mx, z[u]);
        }
        for (std::int64_t u = 0; u <= t; ++u) sum += std::exp(z[u] - mx);
        lse[(ib * x.a + ih) * x.s + t] = static_cast<float>(mx + std::log(sum));
      }
    }
  }
  return lse;
}

// Slot c (0 q, 1 k, 2 v) of a (b, s, a, 3, d) tensor as (b, s, a, d).
std::vector<float> slot(const std::vector<float>& packed, const Shape& x, int c) {
  std::vector<float> out(x.out());
  for (std::int64_t row = 0; row < x.b * x.s * x.a; ++row) {
    std::copy_n(packed.begin() + (row * 3 + c) * x.d, x.d, out.begin() + row * x.d);
  }
  return out;
}

template <class T> class FlashAttention : public ::testing::Test {};
TYPED_TEST_SUITE(FlashAttention, Types16, TypeNames);

// out: fp32 math on inputs exact in T, rounded once to T: elementwise (a 1-ulp
// flip when GPU and CPU fp32 sums straddle a rounding boundary). lse: fp32 sum of
// s exponentials against a double reference: fp32_reduction(s).
TYPED_TEST(FlashAttention, ForwardMatchesReference) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  for (const Shape& x : kShapes) {
    SCOPED_TRACE(name("forward", x));
    std::mt19937 rng(static_cast<unsigned>(7 + x.s * 131 + x.d));
    const auto qkv = gputest::random_values<T>(rng, x.qkv());
    std::vector<float> out_ref(x.out()), probs(x.b * x.a * x.s * x.s);
    cpu::attention_forward(qkv.data(), x.b, x.s, x.a, x.d, out_ref.data(), probs.data());

    DeviceBuffer<T> qkv_d(gputest::to_type<T>(qkv)), out_d(x.out());
    DeviceBuffer<float> lse_d(x.lse());
    cuda::flash_attention_forward(qkv_d.get(), x.b, x.s, x.a, x.d, out_d.get(), lse_d.get(), nullptr);
    expect_no_cuda_error();
    gputest::expect_close<T>(got(out_d), out_ref, gputest::elementwise<T>(), "out");
    gputest::expect_close<float>(got(lse_d), lse_reference(qkv, x), gputest::fp32_reduction(double(x.s)), "lse");
  }
}

// dq, dk, dv: fp32 math on inputs exact in T, except O (rounded to T by the
// forward) inside D = rowsum(dO ∘ O), a length-d reduction of rounded inputs:
// reduction<T>(d), which also covers the final rounding to T.
TYPED_TEST(FlashAttention, BackwardMatchesReference) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  for (const Shape& x : kShapes) {
    SCOPED_TRACE(name("backward", x));
    std::mt19937 rng(static_cast<unsigned>(11 + x.s * 131 + x.d));
    const auto qkv = gputest::random_values<T>(rng, x.qkv());
    const auto dout = gputest::random_values<T>(rng, x.out());
    std::vector<float> out_ref(x.out()), probs(x.b * x.a * x.s * x.s), dqkv_ref(x.qkv());
    cpu::attention_forward(qkv.data(), x.b, x.s, x.a, x.d, out_ref.data(), probs.data());
    cpu::attention_backward(dout.data(), qkv.data(), probs.data(), x.b, x.s, x.a, x.d, dqkv_ref.data());

    DeviceBuffer<T> qkv_d(gputest::to_type<T>(qkv)), dout_d(gputest::to_type<T>(dout)), out_d(x.out()),
        dqkv_d(x.qkv());
    DeviceBuffer<float> lse_d(x.lse()), workspace(cuda::flash_attention_workspace_floats(x.b, x.s, x.a, x.d));
    cuda::flash_attention_forward(qkv_d.get(), x.b, x.s, x.a, x.d, out_d.get(), lse_d.get(), nullptr);
    cuda::flash_attention_backward(dout_d.get(), qkv_d.get(), out_d.get(), lse_d.get(), x.b, x.s, x.a, x.d,
                                   dqkv_d.get(), workspace.get(), nullptr);  // workspace poisoned: must be zeroed
    expect_no_cuda_error();
    const auto dqkv = got(dqkv_d);
    const auto tol = gputest::reduction<T>(double(x.d));
    const char* names[] = {"dq", "dk", "dv"};
    for (int c = 0; c < 3; ++c) gputest::expect_close<T>(slot(dqkv, x, c), slot(dqkv_ref, x, c), tol, names[c]);
  }
}

// Changing the last token's k and v leaves out and lse of every earlier row
// bit for bit unchanged (masked columns contribute an exact 0), and changes the last row.
TYPED_TEST(FlashAttention, FutureTokensDoNotReachEarlierRows) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  for (const Shape& x : {Shape{2, 100, 2, 64}, Shape{1, 64, 3, 128}}) {
    SCOPED_TRACE(name("causality", x));
    std::mt19937 rng(23);
    auto qkv = gputest::random_values<T>(rng, x.qkv());
    DeviceBuffer<T> qkv_d(gputest::to_type<T>(qkv)), out1(x.out()), out2(x.out());
    DeviceBuffer<float> lse1(x.lse()), lse2(x.lse());
    cuda::flash_attention_forward(qkv_d.get(), x.b, x.s, x.a, x.d, out1.get(), lse1.get(), nullptr);

    const auto fresh = gputest::random_values<T>(rng, qkv.size());
    for (std::int64_t ib = 0; ib < x.b; ++ib) {  // k and v slots of position s − 1, every head
      const std::int64_t first = ((ib * x.s + x.s - 1) * x.a) * 3 * x.d, last = first + x.a * 3 * x.d;
      for (std::int64_t i = first; i < last; ++i) {
        if ((i / x.d) % 3 != 0) qkv[i] = fresh[i];
      }
    }
    qkv_d.upload(gputest::to_type<T>(qkv));
    cuda::flash_attention_forward(qkv_d.get(), x.b, x.s, x.a, x.d, out2.get(), lse2.get(), nullptr);
    expect_no_cuda_error();

    const auto o1 = got(out1), o2 = got(out2), l1 = got(lse1), l2 = got(lse2);
    std::int64_t changed_last = 0;
    for (std::int64_t i = 0; i < x.out(); ++i) {
      const std::int64_t t = (i / (x.a * x.d)) % x.s;
      if (t < x.s - 1) {
        ASSERT_EQ(o1[i], o2[i]) << "out element " << i << " (position " << t << ") depends on the last token";
      } else {
        changed_last += o1[i] != o2[i];
      }
    }
    for (std::int64_t i = 0; i < x.lse(); ++i) {
      if (i % x.s < x.s - 1) {
        ASSERT_EQ(l1[i], l2[i]) << "lse element " << i << " depends on the last token";
      }
    }
    EXPECT_GT(changed_last, 0) << "the perturbed token did not reach the last row";
  }
}

TYPED_TEST(FlashAttention, RejectsHeadDimAbove128) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  EXPECT_THROW(cuda::flash_attention_forward<T>(nullptr, 1, 8, 1, 129, nullptr, nullptr, nullptr),
               std::invalid_argument);
  EXPECT_THROW(cuda::flash_attention_backward<T>(nullptr, nullptr, nullptr, nullptr, 1, 8, 1, 129, nullptr, nullptr,
                                                 nullptr),
               std::invalid_argument);
}

}  // namespace
}  // namespace ptdp
