// GPU tests of causal mask + softmax (softmax.cu), bf16 and fp16: fused and
// unfused forward against a plain fp32 reference, against each other and in
// place, and the backward; rows long enough (s = 2049, not a multiple of the
// 256-thread block) and many enough (b·a·s > 4096 row blocks, b·a·s² > 4096
// blocks of 256 threads) that every column loop and grid-stride loop runs.
// core/kernels/cpu has no stand-alone reference of this op (its attention
// reference computes it inline, attention.cpp forward_row), so the two plain
// loops below are that reference. Tolerance: gputest::softmax (one rounding).
// Letters: b micro-batch, a heads, s sequence; scores (b·a, s, s).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/kernels/cuda/kernels.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;

using gputest::TypeNames;
using gputest::Types16;

using gputest::got;

struct Shape {
  std::int64_t batch, s;  // batch = b·a
};
constexpr Shape kShapes[] = {{6, 33}, {2, 300}, {3, 2049}};  // s < and > one block of threads; long rows

std::string name(const char* what, Shape sh) {
  return std::string(what) + " (b·a " + std::to_string(sh.batch) + ", s " + std::to_string(sh.s) + ")";
}

// probs row t = softmax(scores[t, 0..t]), 0 for columns u > t (the scores
// already carry 1/sqrt(d): the Q·Kᵀ GEMM applies it).
std::vector<float> softmax_reference(const std::vector<float>& scores, Shape sh) {
  std::vector<float> probs(scores.size(), 0.0f);
  for (std::int64_t row = 0; row < sh.batch * sh.s; ++row) {
    const std::int64_t t = row % sh.s;
    const float* x = scores.data() + row * sh.s;
    float* p = probs.data() + row * sh.s;
    float mx = -INFINITY, sum = 0.0f;
    for (std::int64_t u = 0; u <= t; ++u) mx = std::max(mx, x[u]);
    for (std::int64_t u = 0; u <= t; ++u) {
      p[u] = std::exp(x[u] - mx);
      sum += p[u];
    }
    for (std::int64_t u = 0; u <= t; ++u) p[u] /= sum;
  }
  return probs;
}

// dscores[t, u] = p·(dp − Σ_{u'} dp·p) (zero where p is, above the diagonal).
std::vector<float> softmax_backward_reference(const std::vector<float>& probs, const std::vector<float>& dprobs,
                                              Shape sh) {
  std::vector<float> dscores(probs.size());
  for (std::int64_t row = 0; row < sh.batch * sh.s; ++row) {
    const float* p = probs.data() + row * sh.s;
    const float* dp = dprobs.data() + row * sh.s;
    float dot = 0.0f;
    for (std::int64_t u = 0; u < sh.s; ++u) dot += dp[u] * p[u];
    for (std::int64_t u = 0; u < sh.s; ++u) dscores[row * sh.s + u] = p[u] * (dp[u] - dot);
  }
  return dscores;
}

template <class T> class CudaSoftmax : public ::testing::Test {};
TYPED_TEST_SUITE(CudaSoftmax, Types16, TypeNames);

// Scores ~ N(0, 1) exact in T; both variants compute in fp32 and round each
// probability once (the unfused mask copies the scores exactly): softmax<T>().
TYPED_TEST(CudaSoftmax, FusedAndUnfusedMatchReference) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(401);
  for (const Shape sh : kShapes) {
    const std::int64_t count = sh.batch * sh.s * sh.s;
    const auto scores = gputest::random_values<T>(rng, count);
    const auto ref = softmax_reference(scores, sh);
    const auto tol = gputest::softmax<T>();
    for (const bool fused : {true, false}) {
      DeviceBuffer<T> d_scores(gputest::to_type<T>(scores)), d_probs(count);
      cuda::causal_softmax(d_scores.get(), sh.batch, sh.s, d_probs.get(), fused, nullptr);
      gputest::expect_close<T>(got(d_probs), ref, tol, name(fused ? "fused probs" : "unfused probs", sh));
      // The scores are left as they were.
      gputest::expect_close<T>(got(d_scores), scores, gputest::elementwise<T>(), name("scores after", sh));
    }
  }
}

// The fused-operator experiment's premise: both variants give the same
// probabilities (within the rounding above), also in place (probs aliases scores).
TYPED_TEST(CudaSoftmax, FusedAndUnfusedAgreeInPlace) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(402);
  for (const Shape sh : kShapes) {
    const std::int64_t count = sh.batch * sh.s * sh.s;
    const auto scores = gputest::to_type<T>(gputest::random_values<T>(rng, count));
    DeviceBuffer<T> d_fused(scores), d_unfused(scores);
    cuda::causal_softmax(d_fused.get(), sh.batch, sh.s, d_fused.get(), true, nullptr);
    cuda::causal_softmax(d_unfused.get(), sh.batch, sh.s, d_unfused.get(), false, nullptr);
    gputest::expect_close<T>(got(d_unfused), got(d_fused), gputest::softmax<T>(),
                             name("unfused vs fused, in place", sh));
    const auto ref = softmax_reference(gputest::to_floats(scores), sh);
    gputest::expect_close<T>(got(d_fused), ref, gputest::softmax<T>(),
                             name("fused in place", sh));
  }
}

// probs from the reference forward (rounded to T, exact zeros above the
// diagonal); the backward also in place (dscores aliases dprobs).
TYPED_TEST(CudaSoftmax, BackwardMatchesReferenceAlsoInPlace) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(403);
  for (const Shape sh : kShapes) {
    const std::int64_t count = sh.batch * sh.s * sh.s;
    auto probs = softmax_reference(gputest::random_values<T>(rng, count), sh);
    for (auto& p : probs) p = gputest::round_to<T>(p);
    const auto dprobs = gputest::random_values<T>(rng, count);
    const auto ref = softmax_backward_reference(probs, dprobs, sh);
    const auto tol = gputest::softmax<T>();
    DeviceBuffer<T> d_probs(gputest::to_type<T>(probs)), d_dprobs(gputest::to_type<T>(dprobs)), d_dscores(count);
    cuda::causal_softmax_backward(d_probs.get(), d_dprobs.get(), sh.batch, sh.s, d_dscores.get(), nullptr);
    gputest::expect_close<T>(got(d_dscores), ref, tol, name("dscores", sh));
    cuda::causal_softmax_backward(d_probs.get(), d_dprobs.get(), sh.batch, sh.s, d_dprobs.get(), nullptr);
    gputest::expect_close<T>(got(d_dprobs), ref, tol, name("dscores in place", sh));
  }
}

}  // namespace
}  // namespace ptdp
