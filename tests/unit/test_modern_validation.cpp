// Regression test of the modern validation set (`ptdp validate --set modern`,
// issue 19): at least 15 published runs from at least 4 sources other than the
// SC21 paper, on at least two GPU kinds; every source within its committed
// bound (tests/unit/modern_validation_bounds.json: mean and max |error| may
// not grow by more than the tolerance, the number of compared runs may not
// change); every run of a sweep finds its published value, every published run
// of the reference is used, and every source names where its numbers are.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "core/sim/search.h"
#include "core/sweep/modern_check.h"
#include "core/sweep/project_point.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

nlohmann::json modern_bounds() {
  return nlohmann::json::parse(
      std::ifstream(std::filesystem::path(PTDP_SOURCE_DIR) / "tests/unit/modern_validation_bounds.json"));
}

const std::vector<ExperimentCheck>& modern_checks() {
  static const std::vector<ExperimentCheck> c = check_modern_set(nullptr);
  return c;
}

TEST(ModernValidation, FifteenRunsFromFourSourcesOnTwoGpuKinds) {
  const SetSummary s = summarize_set(modern_checks());
  EXPECT_GE(s.points, 15u);
  EXPECT_GE(s.sources, 4u);
  const nlohmann::json reference = load_reference_experiments(modern_reference_file());
  std::set<std::string> machines;
  for (const auto& file : modern_sweep_files()) machines.insert(load_sweep(file, default_machines_dir(), &reference).machine);
  EXPECT_GE(machines.size(), 2u);
}

TEST(ModernValidation, EverySourceWithinItsCommittedBound) {
  const nlohmann::json b = modern_bounds();
  const double tolerance = b.at("tolerance").get<double>();
  for (const ExperimentCheck& c : modern_checks()) {
    ASSERT_TRUE(b.at("sources").contains(c.name)) << c.name << " has no bound";
    const nlohmann::json& bound = b.at("sources").at(c.name);
    EXPECT_EQ(c.points.size(), bound.at("points").get<std::size_t>()) << c.name;
    EXPECT_LE(c.mean_abs_error, bound.at("mean_abs_error").get<double>() + tolerance) << c.name;
    EXPECT_LE(c.max_abs_error, bound.at("max_abs_error").get<double>() + tolerance) << c.name;
    EXPECT_TRUE(c.refused.empty()) << c.name << ": " << c.refused.front();
  }
  const SetSummary s = summarize_set(modern_checks());
  EXPECT_LE(s.mean_abs_error, b.at("overall").at("mean_abs_error").get<double>() + tolerance);
}

TEST(ModernValidation, EveryRunFindsItsPublishedValueAndItsSource) {
  const nlohmann::json reference = load_reference_experiments(modern_reference_file());
  std::set<std::string> used;  // "<experiment>/<run>"
  for (const auto& file : modern_sweep_files()) {
    const Sweep sweep = load_sweep(file, default_machines_dir(), &reference);
    const nlohmann::json& source = reference.at(sweep.reference).at("source");
    for (const char* key : {"title", "url", "where", "gpu"}) EXPECT_TRUE(source.contains(key)) << sweep.name << ": " << key;
    for (const SweepPoint& p : sweep.points) {
      EXPECT_TRUE(p.paper.has_value()) << sweep.name << " " << p.label << ": no published value";
      used.insert(sweep.reference + "/" + p.label);
    }
  }
  for (const auto& [name, experiment] : reference.items())
    for (const auto& [run, value] : experiment.at("runs").items()) {
      EXPECT_TRUE(used.contains(name + "/" + run)) << name << "/" << run << " is published and never projected";
      EXPECT_TRUE(value.contains("where")) << name << "/" << run;
    }
}

// `ptdp sweep` reads the shipped reference: a modern sweep projects with its published values.
TEST(CliSweep, AModernSweepRunsWithItsPublishedValues) {
  const nlohmann::json shipped = load_reference_experiments();
  for (const auto& file : modern_sweep_files())
    for (const SweepPoint& p : load_sweep(file, default_machines_dir(), &shipped).points)
      EXPECT_TRUE(p.paper.has_value()) << file << " " << p.label;
  test::ScratchDir dir("sweep-modern");
  const std::string sweep = (std::filesystem::path(PTDP_SOURCE_DIR) / "sweeps/modern/llama3.json").string();
  const auto r = test::run_command(test::ptdp_cli() + " sweep " + sweep + " --mode project --out s.json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "s.json"));
  ASSERT_FALSE(j["points"].empty()) << j.dump().substr(0, 400);
  EXPECT_TRUE(j["points"][0].dump().find("430") != std::string::npos) << j["points"][0].dump().substr(0, 600);
}

// Issue 33, item 3: NVIDIA's H100 weak-scaling rows (NeMo Megatron GPT3 175B)
// fit under their published plans, and the default search finds a plan for each.
TEST(ModernValidation, H100WeakScalingRowsFitAndTheSearchFindsAPlan) {
  const nlohmann::json reference = load_reference_experiments(modern_reference_file());
  const Sweep sweep = load_sweep(std::filesystem::path(PTDP_SOURCE_DIR) / "sweeps/modern/dgxc_gpt3_175b.json",
                                 default_machines_dir(), &reference);
  ASSERT_FALSE(sweep.points.empty());
  for (const SweepPoint& p : sweep.points) {
    EXPECT_TRUE(project(p.config, nullptr).fits) << p.label;
    EXPECT_TRUE(project_best(p.config, SearchSpace{}, nullptr).found) << p.label;
  }
}

// A run that does not fit carries its margin by component and the smallest change that fits.
TEST(ModernValidation, AnUnfitRunCarriesItsMargin) {
  const nlohmann::json reference = load_reference_experiments(modern_reference_file());
  const Sweep sweep = load_sweep(std::filesystem::path(PTDP_SOURCE_DIR) / "sweeps/modern/llama3.json",
                                 default_machines_dir(), &reference);
  for (const SweepPoint& p : sweep.points) {
    const PointOutcome o = project_point(sweep, p, nullptr, Annotations::none);
    if (o.status != Outcome::does_not_fit) continue;
    const nlohmann::json& m = o.result.at("does_not_fit");
    EXPECT_GT(m.at("needed_bytes").get<std::int64_t>(), m.at("available_bytes").get<std::int64_t>()) << p.label;
    for (const char* key : {"weights", "gradients", "optimizer", "activations", "workspace"})
      EXPECT_TRUE(m.at("by_component").contains(key)) << p.label << " " << key;
    EXPECT_FALSE(m.at("fits_with").is_null()) << p.label;
    EXPECT_NE(o.reason.find("GiB over"), std::string::npos) << o.reason;
  }
}

TEST(CliValidate, ModernSetWritesSourcesAndOverallAndRefusesAnUnknownSet) {
  test::ScratchDir dir("validate-modern");
  const auto r = test::run_command(test::ptdp_cli() + " validate --set modern --quiet --out m.json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("modern set:"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "m.json"));
  EXPECT_EQ(j["set"], "modern");
  EXPECT_GE(j["overall"]["points"].get<int>(), 15);
  EXPECT_TRUE(j["experiments"][0]["source"].contains("url"));
  const auto bad = test::run_command(test::ptdp_cli() + " validate --set recent", dir);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--set"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace ptdp
