// GPU tests of the vocabulary-parallel cross-entropy pieces (cross_entropy.cu),
// bf16 and fp16 logits, against the fp32 CPU reference (core/kernels/cpu/cross_entropy.h).
// Letters: n rows (tokens), Vt shard width; this rank holds ids [vocab_start, +Vt),
// targets fall inside and outside it; the "global" max and sum stand in for the
// all-reduced ones (larger than this shard's). Cases cover the scalar path (Vt
// not a multiple of 8; an unaligned view), the 128-bit path, and more rows
// than one grid (a second grid-stride round).
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
#include "tests/gpu/gpu_views.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;
using gputest::OffsetBuffer;

using gputest::TypeNames;
using gputest::Types16;

using gputest::got;

// This rank holds shard 2 of a Vt-wide split: ids [2·Vt, 3·Vt). offset: elements
// between an aligned allocation and row 0 of logits and dlogits.
struct Case {
  std::int64_t n, vt;
  std::size_t offset;
  std::int64_t vocab_start() const { return 2 * vt; }
};
constexpr Case kCases[] = {
    {37, 97, 0},     // scalar: Vt not a multiple of 8
    {40, 1024, 0},   // 128-bit accesses
    {37, 96, 1},     // unaligned view: scalar
    {16400, 64, 0},  // rows beyond the 16384-block grid
};

std::string name(const char* what, Case c) {
  return std::string(what) + " (n " + std::to_string(c.n) + ", Vt " + std::to_string(c.vt) + ", offset " +
         std::to_string(c.offset) + ")";
}

// Logits (n, Vt) ~ N(0, 2²) and targets, the first four at the shard's edges.
template <class T> struct Problem {
  Case c;
  std::vector<float> logits;
  std::vector<std::int32_t> targets;
  Problem(std::mt19937& rng, Case cs) : c(cs), logits(gputest::random_values<T>(rng, c.n * c.vt, 2.0f)), targets(c.n) {
    const auto first = static_cast<std::int32_t>(c.vocab_start());
    const auto end = static_cast<std::int32_t>(c.vocab_start() + c.vt);
    std::uniform_int_distribution<std::int32_t> dist(first - 40, end + 39);
    for (auto& t : targets) t = dist(rng);
    targets[0] = first;  // first and last column: inside
    targets[1] = end - 1;
    targets[2] = first - 1;  // just outside
    targets[3] = end;
  }
  // Global row max and sum of exponentials: this shard's plus other shards'.
  void global_stats(std::mt19937& rng, std::vector<float>& row_max, std::vector<float>& sum_exp) const {
    std::uniform_real_distribution<float> extra(0.0f, 3.0f);
    row_max.assign(c.n, 0.0f);
    sum_exp.assign(c.n, 0.0f);
    cpu::ce_row_max(logits.data(), c.n, c.vt, row_max.data());
    for (auto& m : row_max) m += extra(rng);
    cpu::ce_row_sum_exp(logits.data(), c.n, c.vt, row_max.data(), sum_exp.data());
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
  for (const Case c : kCases) {
    const Problem<T> pb(rng, c);
    OffsetBuffer<T> d_logits(gputest::to_type<T>(pb.logits), c.offset);
    DeviceBuffer<float> d_max(c.n);
    cuda::ce_row_max(d_logits.get(), c.n, c.vt, d_max.get(), nullptr);
    std::vector<float> ref(c.n);
    cpu::ce_row_max(pb.logits.data(), c.n, c.vt, ref.data());
    gputest::expect_close<float>(got(d_max), ref, gputest::elementwise<float>(), name("ce_row_max", c));
  }
}

TYPED_TEST(CudaCrossEntropy, RowSumExpMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(502);
  for (const Case c : kCases) {
    const Problem<T> pb(rng, c);
    std::vector<float> row_max, unused;
    pb.global_stats(rng, row_max, unused);
    OffsetBuffer<T> d_logits(gputest::to_type<T>(pb.logits), c.offset);
    DeviceBuffer<float> d_max(row_max), d_sum(c.n);
    cuda::ce_row_sum_exp(d_logits.get(), c.n, c.vt, d_max.get(), d_sum.get(), nullptr);
    std::vector<float> ref(c.n);
    cpu::ce_row_sum_exp(pb.logits.data(), c.n, c.vt, row_max.data(), ref.data());
    gputest::expect_close<float>(got(d_sum), ref, gputest::fp32_reduction(static_cast<double>(c.vt)),
                                 name("ce_row_sum_exp", c));
  }
}

// A copy of one logit, or 0: exact.
TYPED_TEST(CudaCrossEntropy, TargetLogitMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(503);
  const Case c = kCases[0];
  const Problem<T> pb(rng, c);
  DeviceBuffer<T> d_logits(gputest::to_type<T>(pb.logits));
  DeviceBuffer<std::int32_t> d_targets(pb.targets);
  DeviceBuffer<float> d_target_logit(c.n);
  cuda::ce_target_logit(d_logits.get(), d_targets.get(), c.n, c.vt, c.vocab_start(), d_target_logit.get(), nullptr);
  std::vector<float> ref(c.n);
  cpu::ce_target_logit(pb.logits.data(), pb.targets.data(), c.n, c.vt, c.vocab_start(), ref.data());
  gputest::expect_close<float>(got(d_target_logit), ref, gputest::elementwise<float>(), "ce_target_logit");
}

// fp32 in, fp32 out: a log and two additions (k = 1).
TEST(CudaCrossEntropyLoss, MatchesCpu) {
  PTDP_REQUIRE_GPU();
  std::mt19937 rng(504);
  constexpr std::int64_t kN = 37;
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
  const float scale = 1.5f;
  for (const Case c : kCases) {
    const Problem<T> pb(rng, c);
    std::vector<float> row_max, sum_exp;
    pb.global_stats(rng, row_max, sum_exp);
    OffsetBuffer<T> d_logits(gputest::to_type<T>(pb.logits), c.offset), d_dlogits(c.n * c.vt, c.offset);
    DeviceBuffer<std::int32_t> d_targets(pb.targets);
    DeviceBuffer<float> d_max(row_max), d_sum(sum_exp);
    cuda::ce_backward(d_logits.get(), d_targets.get(), d_max.get(), d_sum.get(), c.n, c.vt, c.vocab_start(), scale,
                      d_dlogits.get(), nullptr);
    std::vector<float> ref(c.n * c.vt);
    cpu::ce_backward(pb.logits.data(), pb.targets.data(), row_max.data(), sum_exp.data(), c.n, c.vt, c.vocab_start(),
                     scale, ref.data());
    gputest::expect_close<T>(got(d_dlogits), ref, gputest::elementwise<T>(), name("ce_backward dlogits", c));
  }
}

}  // namespace
}  // namespace ptdp
