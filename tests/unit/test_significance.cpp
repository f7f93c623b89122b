// The one-sided Mann–Whitney U test against p-values worked out by hand:
// with m = n = 3 every one of the C(6,3) = 20 ways to split the pooled ranks
// is equally likely under no difference, so p is (splits at least as extreme)/20.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/gate/significance.h"

namespace ptdp {
namespace {

TEST(Significance, CompletelySeparatedThreeAgainstThreeIsOneInTwenty) {
  const RankTest t = mann_whitney_greater({1.0, 1.1, 1.2}, {1.3, 1.4, 1.5});
  EXPECT_TRUE(t.exact);
  EXPECT_DOUBLE_EQ(t.u, 9.0);          // all 9 pairs have NEW larger
  EXPECT_DOUBLE_EQ(t.p, 1.0 / 20.0);   // only this split reaches U = 9
  // NEW faster: every split is at least as extreme as U = 0.
  EXPECT_DOUBLE_EQ(mann_whitney_greater({1.3, 1.4, 1.5}, {1.0, 1.1, 1.2}).p, 1.0);
}

TEST(Significance, PartlyOverlappingSamplesCountTheSplitsAsExtreme) {
  // Pool 1 1.5 2 3 4 5: NEW (1.5, 4, 5) beats 1 + 3 + 3 = 7 of BASE's values.
  // U over the 20 splits for 3 against 3 takes 0..9 with counts 1 1 2 3 3 3 3 2 1 1,
  // so P(U >= 7) = (2 + 1 + 1)/20.
  const RankTest t = mann_whitney_greater({1, 2, 3}, {1.5, 4, 5});
  EXPECT_DOUBLE_EQ(t.u, 7.0);
  EXPECT_DOUBLE_EQ(t.p, 4.0 / 20.0);
}

TEST(Significance, TiesShareTheirMidrank) {
  // Pool 1 1 | 2 2 | 3 3 has midranks 1.5 1.5 3.5 3.5 5.5 5.5; NEW (2, 3, 3) sums
  // 14.5, the largest sum: both 5.5s and either 3.5, 2 of the 20 splits.
  const RankTest t = mann_whitney_greater({1, 1, 2}, {2, 3, 3});
  EXPECT_DOUBLE_EQ(t.u, 8.5);  // 14.5 − 3·4/2; the tie of 2s counts one half
  EXPECT_DOUBLE_EQ(t.p, 2.0 / 20.0);
  // Every value equal: nothing says NEW is slower.
  EXPECT_DOUBLE_EQ(mann_whitney_greater({2, 2, 2}, {2, 2, 2}).p, 1.0);
}

TEST(Significance, UnequalSidesUseTheirOwnCount) {
  // 4 against 2 separated: 1/C(6,2) = 1/15.
  EXPECT_DOUBLE_EQ(mann_whitney_greater({1, 2, 3, 4}, {5, 6}).p, 1.0 / 15.0);
  EXPECT_DOUBLE_EQ(min_attainable_p(4, 2), 1.0 / 15.0);
}

TEST(Significance, TheSmallestPossiblePValueSaysWhenTheTestCanReject) {
  EXPECT_DOUBLE_EQ(min_attainable_p(3, 3), 0.05);      // just reaches alpha 0.05
  EXPECT_DOUBLE_EQ(min_attainable_p(2, 2), 1.0 / 6.0);  // never can
  EXPECT_DOUBLE_EQ(min_attainable_p(1, 1), 0.5);
  EXPECT_NEAR(min_attainable_p(10, 10), 1.0 / 184756.0, 1e-18);
}

TEST(Significance, LargeSamplesUseTheNormalApproximation) {
  std::vector<double> base, slow, same;
  for (int i = 0; i < 25; ++i) {
    base.push_back(1.0 + 0.001 * i);
    slow.push_back(2.0 + 0.001 * i);
  }
  const RankTest separated = mann_whitney_greater(base, slow);
  EXPECT_FALSE(separated.exact);
  EXPECT_DOUBLE_EQ(separated.u, 625.0);
  EXPECT_LT(separated.p, 1e-8);
  // The same values on both sides: U is its mean, and the continuity correction puts p just above 1/2.
  const RankTest null = mann_whitney_greater(base, base);
  EXPECT_DOUBLE_EQ(null.u, 312.5);
  EXPECT_GT(null.p, 0.5);
  EXPECT_LT(null.p, 0.52);
}

// At the switch from exact to approximate the two agree to about 0.01 at
// p near 0.05: 20 a side is exact, 21 a side approximate, on interleaved samples.
TEST(Significance, TheApproximationAgreesWithTheExactNearTheSwitch) {
  const auto shifted = [](int n, double shift) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(i + shift);
    return v;
  };
  const RankTest exact = mann_whitney_greater(shifted(20, 0), shifted(20, 4.5));
  const RankTest approx = mann_whitney_greater(shifted(21, 0), shifted(21, 4.5));
  EXPECT_TRUE(exact.exact);
  EXPECT_FALSE(approx.exact);
  EXPECT_GT(exact.p, 0.01);
  EXPECT_LT(exact.p, 0.2);
  EXPECT_NEAR(exact.p, approx.p, 0.02);
}

TEST(Significance, TheSpreadIsTheBoxPlotsAndIgnoresAnOutlier) {
  const Spread s = spread_of({100, 3, 1, 4, 2});  // sorted 1 2 3 4 100
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.upper_fence, 7);  // 4 + 1.5 · 2
  EXPECT_DOUBLE_EQ(spread_of({1, 2, 3, 4}).q1, 1.75);  // between order statistics, linearly
  EXPECT_THROW(spread_of({}), std::invalid_argument);
}

TEST(Significance, EmptySamplesAreRefused) {
  EXPECT_THROW(mann_whitney_greater({}, {1.0}), std::invalid_argument);
  EXPECT_THROW(mann_whitney_greater({1.0}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace ptdp
