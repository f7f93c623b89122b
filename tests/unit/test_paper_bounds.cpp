// Regression bounds of the projection against the paper: every experiment of
// `ptdp validate` against the committed table tests/unit/paper_validation_bounds.json.
// An experiment fails when its mean |error| grows by more than the table's
// tolerance (0.5 points) over its bound, when it gains ordering violations, or
// when it has published values and no bound (a new experiment needs one).
#include <gtest/gtest.h>

#include <fstream>

#include "core/sweep/paper_check.h"

namespace ptdp {
namespace {

const std::filesystem::path kSource(PTDP_SOURCE_DIR);

nlohmann::json bounds() { return nlohmann::json::parse(std::ifstream(kSource / "tests/unit/paper_validation_bounds.json")); }

std::vector<ExperimentCheck> paper_checks() {
  const nlohmann::json reference = load_reference_experiments();
  std::vector<ExperimentCheck> checks;
  for (const auto& e : std::filesystem::directory_iterator(kSource / "sweeps")) {
    if (e.path().extension() != ".json") continue;
    const Sweep sweep = load_sweep(e.path(), default_machines_dir(), &reference);
    if (sweep.reference.empty() || sweep.mode == SweepMode::measure) continue;
    ExperimentCheck c = check_against_paper(sweep, nullptr);
    if (!c.points.empty()) checks.push_back(std::move(c));
  }
  return checks;
}

TEST(PaperBounds, NoExperimentWorseThanItsCommittedBound) {
  const nlohmann::json b = bounds();
  const double tolerance = b.at("tolerance").get<double>();
  const std::vector<ExperimentCheck> checks = paper_checks();
  ASSERT_GE(checks.size(), 13u);
  for (const ExperimentCheck& c : checks) {
    ASSERT_TRUE(b.at("experiments").contains(c.name)) << c.name << " has published values and no bound";
    const nlohmann::json& bound = b.at("experiments").at(c.name);
    EXPECT_EQ(c.points.size(), bound.at("points").get<std::size_t>()) << c.name;
    EXPECT_LE(c.mean_abs_error, bound.at("mean_abs_error").get<double>() + tolerance) << c.name;
    EXPECT_LE(c.ordering_violations.size(), bound.at("ordering_violations").get<std::size_t>()) << c.name;
  }
}

}  // namespace
}  // namespace ptdp
