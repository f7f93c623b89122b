// The gate cannot be fooled by shape (issue 30): a point dropped, repeated,
// re-typed or re-tagged between BASE and NEW, layouts that differ, a
// projection offered as measured, a key repeated in metrics, figures no run
// can have. Each was once "0 regressed" and exit 0.
#include <gtest/gtest.h>

#include "core/gate/compare.h"
#include "tests/cli_test_util.h"
#include "tests/compare_test_util.h"

namespace ptdp {
namespace {

using json = nlohmann::json;
using test::result;
using test::ScratchDir;
using test::sweep;
using test::sweep_point;

Comparison compared(const json& base, const json& now) {
  return compare_results(compare_entries(base, "base.json"), compare_entries(now, "new.json"), 5);
}

std::string refusal_of(const json& doc) { return test::entries_refusal(doc, "new.json"); }

test::Run compare_cli(const ScratchDir& dir, const json& base, const json& now) {
  const auto b = dir.write("base.json", base.dump()), n = dir.write("new.json", now.dump());
  return test::run_command(test::ptdp_cli() + " compare " + b.string() + " " + n.string() + " --junit j.xml", dir);
}

json two_points() {
  return sweep({sweep_point("a", 2, result("projected", 8, 100, 1)), sweep_point("b", 4, result("projected", 8, 100, 1))});
}

TEST(CompareShape, APointDroppedFromNewFailsTheGate) {
  const json now = sweep({sweep_point("a", 2, result("projected", 8, 100, 1))});
  const Comparison c = compared(two_points(), now);
  EXPECT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.only_in_base, std::vector<std::string>{"fig:b (projected)"});
  ScratchDir dir("shape-dropped");
  const auto r = compare_cli(dir, two_points(), now);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("fig:b (projected) is in BASE but not in NEW: dropped"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NEW is " + (dir.path() / "new.json").string()), std::string::npos) << r.err;
  EXPECT_NE(test::read_file(dir.path() / "j.xml").find("dropped: in BASE, not in NEW"), std::string::npos);
  const auto added = compare_cli(dir, now, two_points());  // a point new in NEW is listed, not failed
  EXPECT_EQ(added.status, 0) << added.out << added.err;
}

TEST(CompareShape, APointListedTwiceIsRefusedNamingBothPointers) {
  json twice = two_points();
  twice["points"].push_back(sweep_point("a again", 2, result("projected", 8, 50, 2)));
  EXPECT_EQ(refusal_of(twice), "new.json: /points/2: repeats the configuration and mode of /points/0 "
                               "(fig:a again (projected)): a point is listed once");
  ScratchDir dir("shape-twice");
  const auto r = compare_cli(dir, two_points(), twice);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("new.json: /points/2: repeats"), std::string::npos) << r.err;
  // The same point measured and projected is two entries, not a repetition.
  json both = two_points();
  both["points"].push_back(sweep_point("a", 2, result("measured", 8, 100, 1)));
  EXPECT_EQ(refusal_of(both), "(accepted)");
  // Entries built without compare_entries are held to the same rule.
  const auto entries = compare_entries(two_points(), "b.json");
  EXPECT_THROW(compare_results({entries[0], entries[0]}, entries, 5), std::runtime_error);
}

TEST(CompareShape, OverridesThatChangeOnlyTheirJsonTypeAreRetypedNotNew) {
  json now = two_points();
  now["points"][1]["overrides"]["plan.pp"] = "4";  // 4 in BASE, "4" in NEW
  now["points"][1]["result"]["metrics"]["model_tflops_per_gpu"] = 1.0;  // whatever NEW says, it is not compared
  const Comparison c = compared(two_points(), now);
  EXPECT_TRUE(c.only_in_base.empty() && c.only_in_new.empty());
  ASSERT_EQ(c.unusable.size(), 1u);
  EXPECT_EQ(c.unusable[0].rfind("fig:b (projected): re-typed: BASE /points/1 and NEW /points/1 differ only in the JSON "
                                "types of their overrides",
                                0),
            0u)
      << c.unusable[0];
  ScratchDir dir("shape-retyped");
  EXPECT_EQ(compare_cli(dir, two_points(), now).status, 2);
}

TEST(CompareShape, ALabelNewChangedIsReTagged) {
  json now = two_points();
  now["points"][1]["label"] = "renamed";
  const Comparison c = compared(two_points(), now);
  ASSERT_EQ(c.unusable.size(), 1u);
  EXPECT_EQ(c.unusable[0], "fig:b (projected): re-tagged: labelled \"fig:renamed\" in NEW");
  now = two_points();
  now["points"][1]["series"] = "other curve";
  EXPECT_EQ(compared(two_points(), now).unusable.at(0), "fig:b (projected): re-tagged: labelled \"fig:b other curve\" in NEW");
}

TEST(CompareShape, LayoutsThatDifferAreNotCompared) {
  json now = two_points();
  json& moved = now["points"][1]["result"];  // the point's overrides kept, its result of another layout
  moved["plan"]["dp"] = 2;
  moved["metrics"]["flops_per_iteration"]["model"] = 2 * moved["metrics"]["flops_per_iteration"]["model"].get<double>();
  Comparison c = compared(two_points(), now);
  EXPECT_EQ(c.unusable.at(0), "fig:b (projected): layout differs: plan.dp 1 in BASE, 2 in NEW");
  // Two single results of different configurations: their layouts, named, instead of "nothing matched".
  json other = result("measured", 8, 150, 2);
  other["plan"]["micro_batch"] = 4;
  c = compared(result("measured", 8, 150, 2), other);
  EXPECT_TRUE(c.only_in_base.empty());
  EXPECT_EQ(c.unusable.at(0), "t8 p2 d1 b1 v2 interleaved (measured): layout differs: plan.micro_batch 1 in BASE, 4 in NEW");
  other = result("measured", 8, 150, 2);
  other["machine"]["name"] = "h100-80gb";
  EXPECT_NE(compared(result("measured", 8, 150, 2), other).unusable.at(0).find("differ outside the layout"),
            std::string::npos);
  ScratchDir dir("shape-layout");
  const auto r = compare_cli(dir, two_points(), now);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot judge fig:b (projected): layout differs: plan.dp 1 in BASE, 2 in NEW"), std::string::npos)
      << r.err;
}

TEST(CompareShape, AProjectionOfferedAsMeasuredIsRefused) {
  json points = two_points();
  points["points"][1]["mode"] = "measured";  // its result says projected
  EXPECT_EQ(refusal_of(points), "new.json: /points/1/mode: is filed as measured but its result says projected");
  json single = result("measured", 8, 150, 2);
  single["projection"] = {{"calibration", nullptr}};
  EXPECT_EQ(refusal_of(single),
            "new.json: /mode: is filed as measured but carries a projection's provenance (\"projection\")");
  ScratchDir dir("shape-mode");
  const auto r = compare_cli(dir, two_points(), points);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("/points/1/mode: is filed as measured"), std::string::npos) << r.err;
}

// The central reader refuses a key repeated in one object; here through compare's own path.
TEST(CompareShape, AKeyRepeatedInMetricsIsRefused) {
  ScratchDir dir("shape-key");
  const std::string good = result("measured", 8, 150, 2).dump();
  std::string twice = good;
  const std::string key = "\"model_tflops_per_gpu\":150.0";
  ASSERT_NE(twice.find(key), std::string::npos) << twice;
  twice.replace(twice.find(key), key.size(), "\"model_tflops_per_gpu\":1.0," + key);
  const auto b = dir.write("base.json", good), n = dir.write("new.json", twice);
  try {
    load_compare_entries(n);
    ADD_FAILURE() << "a repeated key was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("new.json: /metrics/model_tflops_per_gpu"), std::string::npos) << e.what();
  }
  const auto r = test::run_command(test::ptdp_cli() + " compare " + b.string() + " " + n.string(), dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("/metrics/model_tflops_per_gpu"), std::string::npos) << r.err;
}

TEST(CompareShape, FiguresNoRunCanHaveAreNotJudged) {
  const json base = result("measured", 8, 150, 2);
  json denormal = base;
  denormal["metrics"]["model_tflops_per_gpu"] = 1e-310;
  EXPECT_EQ(compared(base, denormal).unusable.at(0),
            "t8 p2 d1 b1 v2 interleaved (measured): NEW metrics.model_tflops_per_gpu is denormal (got 1e-310)");
  json huge = base;
  huge["metrics"]["iteration_s"]["median"] = 1e300;
  EXPECT_NE(compared(huge, base).unusable.at(0).find("BASE metrics.iteration_s.median is above 1e+06"), std::string::npos);
  json median = base;
  median["metrics"]["iteration_s"]["samples"] = {1.0, 1.1, 1.2};  // their median 1.1, the recorded one 2
  EXPECT_NE(compared(base, median).unusable.at(0).find("NEW metrics.iteration_s.median 2 is not the median of its 3 "
                                                       "samples (1.1)"),
            std::string::npos);
  json fast = base;  // 150 TFLOP/s a GPU on a machine whose peak is 100
  fast["plan"]["precision"] = "bf16";
  fast["machine"]["peak_tflops"] = {{"bf16", 100.0}};
  EXPECT_NE(compared(fast, fast).unusable.at(0).find("is faster than its"), std::string::npos);
  ScratchDir dir("shape-figures");
  const auto r = compare_cli(dir, base, denormal);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("NEW metrics.model_tflops_per_gpu is denormal"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ptdp
