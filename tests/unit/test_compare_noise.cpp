// The gate with noise: a pair regresses only when beyond the threshold and
// the iteration-time samples say NEW is slower; too few samples or a
// projection fall back to the threshold and say so.
#include <gtest/gtest.h>

#include <cmath>

#include "core/gate/compare.h"
#include "tests/compare_test_util.h"

namespace ptdp {
namespace {

using json = nlohmann::json;
using test::result;

// A measured result with these iteration-time samples (TFLOP/s from their median, as ptdp train derives it).
json sampled(const std::vector<double>& samples, const std::string& mode = "measured") {
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t k = sorted.size() / 2;
  const double median = sorted.size() % 2 ? sorted[k] : 0.5 * (sorted[k - 1] + sorted[k]);
  json r = result(mode, 8, 100.0 / median, median);
  r["metrics"]["iteration_s"]["samples"] = samples;
  return r;
}

CompareRow only_row(const json& base, const json& now, double threshold = 5, double alpha = 0.05) {
  const Comparison c = compare_results(compare_entries(base, "b"), compare_entries(now, "n"), threshold, alpha);
  EXPECT_EQ(c.rows.size(), 1u);
  return c.rows.empty() ? CompareRow{} : c.rows.front();
}

const std::vector<double> kTightBase = {1.00, 1.01, 0.99, 1.02, 1.00, 0.98, 1.01};

std::vector<double> each_times(const std::vector<double>& v, double f) {
  std::vector<double> out;
  for (const double x : v) out.push_back(x * f);
  return out;
}

TEST(CompareNoise, APlantedTenPercentSlowdownWithATightSpreadRegresses) {
  const CompareRow r = only_row(sampled(kTightBase), sampled(each_times(kTightBase, 1.10)));
  EXPECT_TRUE(r.beyond_threshold);
  ASSERT_TRUE(r.noise.p_value.has_value());
  EXPECT_TRUE(r.noise.exact);
  EXPECT_NEAR(*r.noise.p_value, 1.0 / 3432.0, 1e-12);  // 7 against 7, separated: 1/C(14,7)
  EXPECT_TRUE(r.regressed);
  EXPECT_EQ(r.noise.base_samples, 7);
  ASSERT_TRUE(r.noise.base_spread.has_value());
  EXPECT_DOUBLE_EQ(r.noise.base_spread->min, 0.98);
  EXPECT_DOUBLE_EQ(r.noise.base_spread->max, 1.02);
  EXPECT_NEAR(r.noise.base_spread->upper_fence, 1.0325, 1e-12);  // q3 1.01 + 1.5 · (1.01 − 0.995)
  EXPECT_TRUE(r.noise.beyond_spread);
}

// A whole run slowed by the machine (every iteration 40% slower) is significant by the
// test, but NEW's median stays inside BASE's wide spread: tolerated as the machine's noise.
TEST(CompareNoise, ASignificantShiftInsideAWideBaselineSpreadPasses) {
  const std::vector<double> wide = {0.004, 0.005, 0.008, 0.008, 0.009, 0.009, 0.010,
                                    0.012, 0.012, 0.013, 0.013, 0.016, 0.016, 0.017};
  const CompareRow r = only_row(sampled(wide), sampled(each_times(wide, 1.4)));
  EXPECT_TRUE(r.beyond_threshold);
  ASSERT_TRUE(r.noise.p_value.has_value());
  EXPECT_LT(*r.noise.p_value, 0.05);
  EXPECT_NEAR(r.noise.base_spread->upper_fence, 0.020125, 1e-12);
  EXPECT_FALSE(r.noise.beyond_spread);  // NEW's median 0.0154 s
  EXPECT_FALSE(r.regressed);
}

// Medians 1.05 → 1.2 s (+14%) but the runs overlap: noise, not a regression.
TEST(CompareNoise, MediansBeyondTheThresholdWithOverlappingSpreadsPass) {
  const CompareRow r = only_row(sampled({1.0, 1.3, 1.0, 1.25, 1.05}), sampled({1.2, 1.0, 1.3, 1.15, 1.28}));
  EXPECT_TRUE(r.beyond_threshold);
  ASSERT_TRUE(r.noise.p_value.has_value());
  EXPECT_GT(*r.noise.p_value, 0.05);
  EXPECT_FALSE(r.regressed);
}

TEST(CompareNoise, ASignificantSlowdownWithinTheThresholdPasses) {
  const CompareRow r = only_row(sampled(kTightBase), sampled(each_times(kTightBase, 1.04)));
  EXPECT_LT(*r.noise.p_value, 0.05);  // every NEW sample slower, but only by 4%
  EXPECT_FALSE(r.beyond_threshold);
  EXPECT_FALSE(r.regressed);
}

TEST(CompareNoise, AlphaDecidesAtTheSmallestAttainablePValue) {
  // 3 against 3 separated gives p = 0.05 exactly: significant at 0.05, not at 0.04 (where
  // the test cannot reject at all, so the threshold alone decides and flags it).
  const json base = sampled({1.0, 1.01, 0.99}), now = sampled({1.2, 1.21, 1.19});
  EXPECT_TRUE(only_row(base, now, 5, 0.05).regressed);
  const CompareRow strict = only_row(base, now, 5, 0.04);
  EXPECT_FALSE(strict.noise.p_value.has_value());
  EXPECT_NE(strict.noise.not_tested.find("too few samples for the noise test (3 and 3"), std::string::npos)
      << strict.noise.not_tested;
  EXPECT_TRUE(strict.regressed);
}

TEST(CompareNoise, TooFewSamplesFallBackToTheThresholdAndSaySo) {
  const CompareRow r = only_row(sampled({1.0, 1.3}), sampled({1.2, 1.25}));
  EXPECT_FALSE(r.noise.p_value.has_value());
  EXPECT_NE(r.noise.not_tested.find("too few samples for the noise test (2 and 2: its smallest p is 0.167"),
            std::string::npos)
      << r.noise.not_tested;
  EXPECT_TRUE(r.regressed);  // +7% on the medians, no test to call it noise
  // Results without samples at all (only a median) are the same case.
  const CompareRow bare = only_row(result("measured", 8, 100, 1), result("measured", 8, 100, 1.2));
  EXPECT_EQ(bare.noise.base_samples, 0);
  EXPECT_TRUE(bare.regressed);
}

TEST(CompareNoise, ProjectionsKeepThePlainThresholdRule) {
  const CompareRow r = only_row(sampled({1.0}, "projected"), sampled({1.1}, "projected"));
  EXPECT_FALSE(r.noise.p_value.has_value());
  EXPECT_NE(r.noise.not_tested.find("a projection"), std::string::npos);
  EXPECT_TRUE(r.regressed);
}

TEST(CompareNoise, TheJsonCarriesTheTestPerRow) {
  const Comparison c = compare_results(compare_entries(sampled(kTightBase), "b"),
                                       compare_entries(sampled(each_times(kTightBase, 1.1)), "n"), 5, 0.01);
  const json j = to_json(c);
  EXPECT_EQ(j["schema"], "ptdp.compare/2");
  EXPECT_DOUBLE_EQ(j["alpha"].get<double>(), 0.01);
  const json& row = j["rows"][0];
  EXPECT_EQ(row["regressed"], true);
  EXPECT_EQ(row["beyond_threshold"], true);
  EXPECT_EQ(row["noise"]["samples"]["base"], 7);
  EXPECT_EQ(row["noise"]["samples"]["new"], 7);
  EXPECT_DOUBLE_EQ(row["noise"]["base_spread_s"]["min"].get<double>(), 0.98);
  EXPECT_NEAR(row["noise"]["base_spread_s"]["upper_fence"].get<double>(), 1.0325, 1e-12);
  EXPECT_EQ(row["noise"]["beyond_spread"], true);
  EXPECT_NEAR(row["noise"]["p_value"].get<double>(), 1.0 / 3432.0, 1e-12);
  EXPECT_EQ(row["noise"]["significant"], true);
  EXPECT_FALSE(row["noise"].contains("not_tested"));
}

TEST(CompareNoise, SamplesThatAreNotPositiveNumbersCannotBeJudged) {
  json now = sampled(kTightBase);
  now["metrics"]["iteration_s"]["samples"][2] = "slow";
  const Comparison c = compare_results(compare_entries(sampled(kTightBase), "b"), compare_entries(now, "n"), 5);
  EXPECT_TRUE(c.rows.empty());
  ASSERT_EQ(c.unusable.size(), 1u);
  EXPECT_NE(c.unusable[0].find("NEW metrics.iteration_s.samples[2] is not a finite positive number (got \"slow\")"),
            std::string::npos)
      << c.unusable[0];
  now["metrics"]["iteration_s"]["samples"] = 3;
  EXPECT_NE(compare_results(compare_entries(now, "b"), compare_entries(sampled(kTightBase), "n"), 5)
                .unusable.at(0)
                .find("BASE metrics.iteration_s.samples is not a list (got 3)"),
            std::string::npos);
}

TEST(CompareNoise, AlphaMustLieBetweenZeroAndOne) {
  const auto e = compare_entries(sampled(kTightBase), "b");
  for (const double alpha : {0.0, 1.0, -0.1, std::nan("")})
    EXPECT_THROW(compare_results(e, e, 5, alpha), std::invalid_argument) << alpha;
}

}  // namespace
}  // namespace ptdp
