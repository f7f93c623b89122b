// Regression test of the projection against the paper (ptdp validate): Table 1
// within 5% mean and 10% maximum absolute error; Figures 12-18 within 8% mean
// over their points, in the paper's order (pairs more than 5% apart published).
// The one known ordering miss (Figure 16, batch 512: micro-batch 1 vs 8 and
// 2 vs 4) is pinned so that any new one fails. Section 5.10: the 1T model's
// checkpoint size within 3% (independent of the profile), and the save time
// and load bandwidth (consistency checks: the profile's filesystem figures
// come from the same sentences; docs/projection.md).
#include <gtest/gtest.h>

#include <cmath>

#include "core/sweep/paper_check.h"

namespace ptdp {
namespace {

ExperimentCheck check(const std::string& name) {
  static const nlohmann::json reference = load_reference_experiments();
  const auto file = std::filesystem::path(PTDP_SOURCE_DIR) / "sweeps" / (name + ".json");
  return check_against_paper(load_sweep(file, default_machines_dir(), &reference), nullptr);
}

TEST(PaperValidation, Table1WithinFivePercentMeanAndTenPercentMax) {
  const ExperimentCheck c = check("table1");
  ASSERT_EQ(c.points.size(), 10u);
  EXPECT_LE(c.mean_abs_error, 0.05);
  EXPECT_LE(c.max_abs_error, 0.10);
  EXPECT_TRUE(c.ordering_violations.empty());
}

TEST(PaperValidation, Figures12To18WithinEightPercentMeanInThePapersOrder) {
  double sum = 0;
  int n = 0;
  for (const char* name : {"figure12", "figure13", "figure14", "figure15", "figure16", "figure17", "figure18"}) {
    const ExperimentCheck c = check(name);
    EXPECT_FALSE(c.points.empty()) << name;
    EXPECT_TRUE(c.refused.empty()) << name;
    for (const auto& p : c.points) sum += std::abs(p.error), ++n;
    const std::size_t allowed = std::string(name) == "figure16" ? 2 : 0;
    EXPECT_LE(c.ordering_violations.size(), allowed) << name;
  }
  EXPECT_LE(sum / n, 0.08) << n << " points";
}

TEST(PaperValidation, FusedOperatorsImproveThroughput) {
  const ExperimentCheck c = check("fused_operators");
  ASSERT_EQ(c.points.size(), 4u);
  for (std::size_t i = 0; i + 1 < c.points.size(); i += 2)  // before, after of one model
    EXPECT_GT(c.points[i + 1].projected, c.points[i].projected) << c.points[i].label;
}

TEST(PaperValidation, Section510CheckpointSizeSaveAndLoad) {
  for (const auto& [name, tolerance] : {std::pair{"checkpoint_size", 0.03}, {"checkpoint_save", 0.03},
                                        {"checkpoint_load", 0.01}}) {
    const ExperimentCheck c = check(name);
    ASSERT_EQ(c.points.size(), 1u) << name << ": " << (c.refused.empty() ? "" : c.refused.front());
    EXPECT_LE(std::abs(c.points[0].error), tolerance) << name << ": projected " << c.points[0].projected
                                                      << ", paper " << c.points[0].paper;
  }
}

}  // namespace
}  // namespace ptdp
