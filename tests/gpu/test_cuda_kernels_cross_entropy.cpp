// GPU tests of the vocabulary-parallel cross-entropy pieces (cross_entropy.cu),
// bf16 and fp16 logits, against the fp32 CPU reference (core/kernels/cpu/cross_entropy.h).
// Letters: n rows (tokens), Vt shard width; this rank holds ids [vocab_start, +Vt),
// targets fall inside and outside it; the "global" max and sum stand in for the
// all-reduced ones (larger than this shard's).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/kernels/cpu/cross_entropy.h"
#include "core/kernels/cuda/kernels.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;

using gputest::TypeNames;
using gputest::Types16;

using gputest::got;

constexpr std::int64_t kN = 37, kVt = 97, kVocabStart = 194;  // shard 2 of a 97-wide split
constexpr auto kFirst = static_cast<std::int32_t>(kVocabStart);  // first and one-past-last id of the shard
constexpr auto kEnd = static_cast<std::int32_t>(kVocabStart + kVt);

// Logits (n, Vt) ~ N(0, 2²) and targets, the first four at the shard's edges.
template <class T> struct Problem {
  std::vector<float> logits;
  std::vector<std::int32_t> targets;
  explicit Problem(std::mt19937& rng) : logits(gputest::random_values<T>(rng, kN * kVt, 2.0f)), targets(kN) {
    std::uniform_int_distribution<std::int32_t> dist(kFirst - 40, kEnd + 39);
    for (auto& t : targets) t = dist(rng);
    targets[0] = kFirst;  // first and last column: inside
    targets[1] = kEnd - 1;
    targets[2] = kFirst - 1;  // just outside
    targets[3] = kEnd;
  }
  // Global row max and sum of exponentials: this shard's plus other shards'.
  void global_stats(std::mt19937& rng, std::vector<float>& row_max, std::vector<float>& sum_exp) const {
    std::uniform_real_distribution<float> extra(0.0f, 3.0f);
    row_max.assign(kN, 0.0f);
    sum_exp.assign(kN, 0.0f);
    cpu::ce_row_max(logits.data(), kN, kVt, row_max.data());
    for (auto& m : row_max) m += extra(rng);
    cpu::ce_row_sum_exp(logits.data(), kN, kVt, row_max.data(), sum_exp.data());
    for (auto& s : sum_exp) s += extra(rng);
  }
};

template <class T> class CudaCrossEntropy : public ::testing::Test {};
TYPED_TEST_SUITE(CudaCrossEntropy, Types16, TypeNames);

// The max of T-representable values is one of them: exact.
TYPED_TEST(CudaCrossEntropy, RowMaxMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(501);
  const Problem<T> pb(rng);
  DeviceBuffer<T> d_logits(gputest::to_type<T>(pb.logits));
  DeviceBuffer<float> d_max(kN);
  cuda::ce_row_max(d_logits.get(), kN, kVt, d_max.get(), nullptr);
  std::vector<float> ref(kN);
  cpu::ce_row_max(pb.logits.data(), kN, kVt, ref.data());
  gputest::expect_close<float>(got(d_max), ref, gputest::elementwise<float>(), "ce_row_max");
}

TYPED_TEST(CudaCrossEntropy, RowSumExpMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(502);
  const Problem<T> pb(rng);
  std::vector<float> row_max, unused;
  pb.global_stats(rng, row_max, unused);
  DeviceBuffer<T> d_logits(gputest::to_type<T>(pb.logits));
  DeviceBuffer<float> d_max(row_max), d_sum(kN);
  cuda::ce_row_sum_exp(d_logits.get(), kN, kVt, d_max.get(), d_sum.get(), nullptr);
  std::vector<float> ref(kN);
  cpu::ce_row_sum_exp(pb.logits.data(), kN, kVt, row_max.data(), ref.data());
  gputest::expect_close<float>(got(d_sum), ref, gputest::fp32_reduction(kVt), "ce_row_sum_exp");
}

// A copy of one logit, or 0: exact.
TYPED_TEST(CudaCrossEntropy, TargetLogitMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(503);
  const Problem<T> pb(rng);
  DeviceBuffer<T> d_logits(gputest::to_type<T>(pb.logits));
  DeviceBuffer<std::int32_t> d_targets(pb.targets);
  DeviceBuffer<float> d_target_logit(kN);
  cuda::ce_target_logit(d_logits.get(), d_targets.get(), kN, kVt, kVocabStart, d_target_logit.get(), nullptr);
  std::vector<float> ref(kN);
  cpu::ce_target_logit(pb.logits.data(), pb.targets.data(), kN, kVt, kVocabStart, ref.data());
  gputest::expect_close<float>(got(d_target_logit), ref, gputest::elementwise<float>(), "ce_target_logit");
}

// fp32 in, fp32 out: a log and two additions (k = 1).
TEST(CudaCrossEntropyLoss, MatchesCpu) {
  PTDP_REQUIRE_GPU();
  std::mt19937 rng(504);
  std::uniform_real_distribution<float> sums(1.0f, 60.0f);
  const auto row_max = gputest::random_values<float>(rng, kN, 3.0f);
  const auto target_logit = gputest::random_values<float>(rng, kN, 3.0f);
  std::vector<float> sum_exp(kN);
  for (auto& s : sum_exp) s = sums(rng);
  DeviceBuffer<float> d_max(row_max), d_sum(sum_exp), d_target(target_logit), d_loss(kN);
  cuda::ce_loss(d_max.get(), d_sum.get(), d_target.get(), kN, d_loss.get(), nullptr);
  std::vector<float> ref(kN);
  cpu::ce_loss(row_max.data(), sum_exp.data(), target_logit.data(), kN, ref.data());
  gputest::expect_close<float>(got(d_loss), ref, gputest::fp32_reduction(1), "ce_loss");
}

// dlogits = scale·(softmax − one-hot) from the global max and sum: an exp, a
// product and one rounding to T per element (element-wise tolerance).
TYPED_TEST(CudaCrossEntropy, BackwardMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(505);
  const Problem<T> pb(rng);
  std::vector<float> row_max, sum_exp;
  pb.global_stats(rng, row_max, sum_exp);
  const float scale = 1.5f;
  DeviceBuffer<T> d_logits(gputest::to_type<T>(pb.logits)), d_dlogits(kN * kVt);
  DeviceBuffer<std::int32_t> d_targets(pb.targets);
  DeviceBuffer<float> d_max(row_max), d_sum(sum_exp);
  cuda::ce_backward(d_logits.get(), d_targets.get(), d_max.get(), d_sum.get(), kN, kVt, kVocabStart, scale,
                    d_dlogits.get(), nullptr);
  std::vector<float> ref(kN * kVt);
  cpu::ce_backward(pb.logits.data(), pb.targets.data(), row_max.data(), sum_exp.data(), kN, kVt, kVocabStart, scale,
                   ref.data());
  gputest::expect_close<T>(got(d_dlogits), ref, gputest::elementwise<T>(), "ce_backward dlogits");
}

}  // namespace
}  // namespace ptdp
