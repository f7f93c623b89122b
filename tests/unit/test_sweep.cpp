// Sweep files: expansion (crossed axes, zipped keys, points), templates, the
// published-value lookup, refused points listed, malformed files refused with
// the file and field named.
#include <gtest/gtest.h>

#include "core/process/outcome.h"
#include "core/sweep/sweep.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;

json base_sweep() {
  return json::parse(R"js({
    "schema": "ptdp.sweep/1", "name": "s", "reproduces": "test", "machine": "cpu-host", "mode": "project",
    "base": {"model": {"layers": 4, "hidden": 64, "heads": 4, "seq_len": 16, "vocab": 128},
             "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 1, "global_batch": 8, "precision": "fp32"}},
    "axes": [{"plan.global_batch": [8, 16]}, {"plan.pp": [1, 2], "plan.tp": [2, 1]}],
    "paper": {"series": "B={plan.global_batch}", "label": "({plan.pp},{plan.tp})"}})js");
}

Sweep load(const json& j, const test::ScratchDir& dir, const json* reference = nullptr) {
  return load_sweep(dir.write("s.json", j.dump()), default_machines_dir(), reference);
}

TEST(Sweep, CrossesAxesAndZipsKeysWithinOne) {
  test::ScratchDir dir("sweep");
  const Sweep s = load(base_sweep(), dir);
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_EQ(s.points[0].config.plan.global_batch, 8);
  EXPECT_EQ(s.points[0].config.plan.pp, 1);
  EXPECT_EQ(s.points[0].config.plan.tp, 2);
  EXPECT_EQ(s.points[3].config.plan.global_batch, 16);
  EXPECT_EQ(s.points[3].config.plan.pp, 2);
  EXPECT_EQ(s.points[3].config.plan.tp, 1);
  EXPECT_EQ(s.points[3].series, "B=16");
  EXPECT_EQ(s.points[3].label, "(2,1)");
  EXPECT_EQ(s.valid_points(), 4);
}

TEST(Sweep, PointsCrossAxesTagsLabelAndPaperValuesAreLookedUp) {
  test::ScratchDir dir("sweep-points");
  json j = base_sweep();
  j["axes"] = json::array({{{"plan.global_batch", {8, 16}}, {"tag.kind", {"small", "large"}}}});
  j["points"] = json::array({{{"model.layers", 2}}, {{"model.layers", 4}}});
  j["reference"] = "toy";
  j["paper"] = {{"pointer", "/series/{tag.kind}/{model.layers}"}, {"label", "{tag.kind}"}, {"metric", "sequences_per_s"}};
  const json reference = {{"toy", {{"series", {{"small", {{"2", 1.5}}}, {"large", {{"4", 9.0}}}}}}}};
  const Sweep s = load(j, dir, &reference);
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_EQ(s.metric, "sequences_per_s");
  EXPECT_EQ(s.points[0].label, "small");
  ASSERT_TRUE(s.points[0].paper.has_value());
  EXPECT_DOUBLE_EQ(*s.points[0].paper, 1.5);
  EXPECT_FALSE(s.points[1].paper.has_value());  // large, 2 layers: not published
  ASSERT_TRUE(s.points[3].paper.has_value());
  EXPECT_DOUBLE_EQ(*s.points[3].paper, 9.0);
}

TEST(Sweep, PointsBreakingARuleAreListedWithTheirReason) {
  test::ScratchDir dir("sweep-invalid");
  json j = base_sweep();
  j["axes"] = json::array({{{"plan.tp", {1, 3}}}});
  const Sweep s = load(j, dir);
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_TRUE(s.points[0].errors.empty());
  ASSERT_FALSE(s.points[1].errors.empty());
  EXPECT_EQ(s.points[1].errors.front().field, "plan.tp");
  EXPECT_EQ(s.valid_points(), 1);
}

// A list-valued field (plan.layers_per_stage) set by a point and by an axis of lists.
TEST(Sweep, PointsAndAxesSetListFields) {
  test::ScratchDir dir("sweep-lists");
  json j = base_sweep();
  j["axes"] = json::array({{{"plan.layers_per_stage", {{1, 3}, {2, 2}}}}});
  j["points"] = json::array({{{"plan.pp", 2}}, {{"plan.pp", 3}, {"plan.layers_per_stage", {1, 2, 1}}}});
  const Sweep s = load(j, dir);
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_EQ(s.points[0].config.plan.layers_per_stage, (std::vector<int>{1, 3}));
  EXPECT_EQ(s.points[1].config.plan.layers_per_stage, (std::vector<int>{2, 2}));
  EXPECT_EQ(s.points[2].config.plan.layers_per_stage, (std::vector<int>{1, 2, 1}));  // the point's own wins
  EXPECT_EQ(s.valid_points(), 4);
}

std::vector<std::string> refusal(const json& j) {
  test::ScratchDir dir("sweep-bad");
  try {
    load(j, dir);
  } catch (const SweepRefused& e) {
    return e.problems();
  }
  return {};
}

bool mentions(const std::vector<std::string>& problems, const std::string& what) {
  for (const auto& p : problems)
    if (p.find(what) != std::string::npos && p.find("s.json") != std::string::npos) return true;
  return false;
}

TEST(Sweep, MalformedFilesAreRefusedNamingFileAndField) {
  json j = base_sweep();
  j["axes"] = json::array({{{"plan.tensor_parallel", {1, 2}}}});
  EXPECT_TRUE(mentions(refusal(j), "plan.tensor_parallel"));
  j = base_sweep();
  j["axez"] = 1;
  EXPECT_TRUE(mentions(refusal(j), "axez: is not a known field"));
  j = base_sweep();
  j["axes"] = json::array({{{"plan.pp", {1, 2}}, {"plan.tp", {1}}}});
  EXPECT_TRUE(mentions(refusal(j), "same length"));
  j = base_sweep();
  j["axes"] = json::array({{{"plan.pp", json::array()}}});
  EXPECT_TRUE(mentions(refusal(j), "non-empty"));
  j = base_sweep();
  j["mode"] = "guess";
  EXPECT_TRUE(mentions(refusal(j), "mode"));
  j = base_sweep();
  j["search"] = {{"plan.tp", {1, 2}}};
  EXPECT_TRUE(mentions(refusal(j), "/search/plan.tp: is not a searchable choice"));
  j = base_sweep();
  j.erase("schema");
  EXPECT_TRUE(mentions(refusal(j), "schema"));
  j = base_sweep();
  j["name"] = "../../x";  // the results file is results/<name>.json
  EXPECT_TRUE(mentions(refusal(j), "name: must be a file name"));
  j["name"] = 7;
  EXPECT_TRUE(mentions(refusal(j), "name: must be a string"));
  j = base_sweep();
  j["machine"] = "tpu-v9";  // refused once for the sweep, not point by point
  EXPECT_TRUE(mentions(refusal(j), "machine \"tpu-v9\" is not known"));
  test::ScratchDir dir("sweep-json");
  const auto broken = dir.write("s.json", "{\"schema\": ");
  EXPECT_THROW(load_sweep(broken, default_machines_dir(), nullptr), SweepRefused);
}

TEST(Sweep, EveryShippedSweepLoads) {
  const json reference = load_reference_experiments();
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(PTDP_SOURCE_DIR) / "sweeps")) {
    if (e.path().extension() != ".json") continue;
    ++files;
    const Sweep s = load_sweep(e.path(), default_machines_dir(), &reference);
    EXPECT_GT(s.valid_points(), 0) << e.path();
    for (const auto& p : s.points) EXPECT_TRUE(p.errors.empty()) << e.path() << " point " << p.index << ": " << p.errors.front().message;
  }
  EXPECT_GE(files, 10);
}

}  // namespace
}  // namespace ptdp

namespace ptdp {
namespace {

TEST(Sweep, ModesAndStatusesKeepTheirJsonSpellings) {
  for (const SweepMode m : {SweepMode::measure, SweepMode::project, SweepMode::automatic})
    EXPECT_EQ(sweep_mode_from_string(to_string(m)), m);
  EXPECT_EQ(to_string(SweepMode::automatic), "auto");
  EXPECT_FALSE(sweep_mode_from_string("measured"));
  EXPECT_EQ(std::string(to_string(ResultMode::measured)), "measured");
  EXPECT_EQ(std::string(to_string(ResultMode::projected)), "projected");
  for (const Outcome s : {Outcome::ok, Outcome::does_not_fit, Outcome::refused, Outcome::failed, Outcome::timeout,
                          Outcome::oom, Outcome::missing})
    EXPECT_EQ(outcome_from_string(to_string(s)), s);
  EXPECT_EQ(to_string(Outcome::does_not_fit), "does_not_fit");
  EXPECT_EQ(outcome_from_string("garbled"), Outcome::failed);
  EXPECT_TRUE(is_failure(Outcome::oom));
  EXPECT_FALSE(is_failure(Outcome::does_not_fit));
}

}  // namespace
}  // namespace ptdp
