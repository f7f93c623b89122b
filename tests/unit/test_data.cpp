// Token sources: sample i is a pure function of (seed, i) and carries structure.
#include <gtest/gtest.h>

#include <map>

#include "core/data/token_source.h"

namespace ptdp {
namespace {

std::vector<std::int32_t> sample(const TokenSource& src, std::int64_t i, int s = 32) {
  std::vector<std::int32_t> out(static_cast<std::size_t>(s) + 1);
  src.sample(i, s, out.data());
  return out;
}

TEST(Data, SyntheticSampleIsAPureFunctionOfSeedAndIndex) {
  auto a = make_synthetic_source(128, 5), b = make_synthetic_source(128, 5), c = make_synthetic_source(128, 6);
  EXPECT_EQ(sample(*a, 17), sample(*b, 17));
  EXPECT_EQ(sample(*a, 17), sample(*a, 17));
  EXPECT_NE(sample(*a, 17), sample(*a, 18));
  EXPECT_NE(sample(*a, 17), sample(*c, 17));
}

TEST(Data, SyntheticTokensAreInRangeAndMostlyFollowOnePermutation) {
  auto src = make_synthetic_source(64, 1);
  std::map<std::pair<int, int>, int> pairs;
  int total = 0;
  for (std::int64_t i = 0; i < 200; ++i) {
    const auto s = sample(*src, i);
    for (std::size_t k = 0; k < s.size(); ++k) {
      ASSERT_GE(s[k], 0);
      ASSERT_LT(s[k], 64);
      if (k > 0) ++pairs[{s[k - 1], s[k]}], ++total;
    }
  }
  // For each previous token, its most frequent successor holds ≈ 80% + 20%/64 of transitions.
  std::map<int, int> best, count;
  for (const auto& [pair, n] : pairs) {
    best[pair.first] = std::max(best[pair.first], n);
    count[pair.first] += n;
  }
  int followed = 0;
  for (const auto& [prev, n] : best) followed += n;
  EXPECT_NEAR(static_cast<double>(followed) / total, 0.8 + 0.2 / 64, 0.03);
}

}  // namespace
}  // namespace ptdp
