// Comparing result files: reading both kinds, matching by configuration,
// deltas, the regression rule at its boundary, and `ptdp compare` end to end.
#include <gtest/gtest.h>

#include "core/metrics/compare.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using json = nlohmann::json;
using test::ScratchDir;

// A ptdp.result/2 with the figures compare reads; tp tells configurations apart.
json result(const std::string& mode, int tp, double tflops, double iteration_s) {
  json r = {{"schema", "ptdp.result/2"},
            {"mode", mode},
            {"model", {{"layers", 2}, {"hidden", 64}}},
            {"plan", {{"tp", tp}, {"pp", 2}, {"dp", 1}, {"micro_batch", 1}, {"virtual_stages", 2},
                      {"schedule", "interleaved"}}},
            {"machine", {{"name", "a100-80gb"}}}};
  r["metrics"] = {{"model_tflops_per_gpu", tflops},
                  {"iteration_s", {{"median", iteration_s}}},
                  {"memory_bytes", {{"peak_measured", nullptr}, {"model", {{"total", 1000.0}}}}},
                  {"bubble", {{"measured", nullptr}, {"simulated", 0.25}}}};
  return r;
}

json sweep_point(const std::string& label, int pp, const json& res) {
  return {{"key", label}, {"mode", res.is_null() ? json("projected") : res["mode"]}, {"status", "ok"}, {"series", ""},
          {"label", label}, {"overrides", {{"plan.pp", pp}, {"plan.tp", 8}}}, {"result", res}};
}

json sweep(const std::vector<json>& points) {
  return {{"schema", "ptdp.sweep-results/1"}, {"sweep", {{"name", "fig"}}}, {"points", points}};
}

Comparison compare(const json& base, const json& now, double threshold = 5) {
  return compare_results(compare_entries(base, "base.json"), compare_entries(now, "new.json"), threshold);
}

std::string error_of(const json& doc) {
  try {
    compare_entries(doc, "x.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Compare, ReadsASingleResultAsOneEntry) {
  const auto entries = compare_entries(result("measured", 8, 100, 1), "r.json");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].mode, ResultMode::measured);
  EXPECT_EQ(entries[0].label, "t8 p2 d1 b1 v2 interleaved");
}

TEST(Compare, ReadsSweepPointsThatHaveAResult) {
  const json s = sweep({sweep_point("(2,8)", 2, result("projected", 8, 100, 1)), sweep_point("(4,8)", 4, nullptr),
                        sweep_point("(8,8)", 8, result("projected", 8, 90, 1))});
  const auto entries = compare_entries(s, "s.json");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].label, "fig:(2,8)");
  EXPECT_EQ(entries[1].label, "fig:(8,8)");
  EXPECT_NE(entries[0].identity, entries[1].identity);
}

TEST(Compare, RefusesAnythingElseNamingTheFileAndTheProblem) {
  EXPECT_EQ(error_of({{"schema", "ptdp.sweep/1"}}), "x.json: not a ptdp result: schema \"ptdp.sweep/1\"");
  EXPECT_EQ(error_of({{"model", 1}}), "x.json: not a ptdp result: no \"schema\"");
  EXPECT_EQ(error_of(json::array()), "x.json: not a ptdp result: not a JSON object");
  EXPECT_EQ(error_of({{"schema", "ptdp.sweep-results/1"}}), "x.json: \"points\" is missing or not an array");
  json r = result("measured", 8, 100, 1);
  r.erase("plan");
  EXPECT_EQ(error_of(r), "x.json: result has no \"plan\" object");
  json s = sweep({sweep_point("(2,8)", 2, result("projected", 8, 100, 1))});
  s["points"][0]["label"] = 3;
  EXPECT_NE(error_of(s).find("x.json: malformed:"), std::string::npos) << error_of(s);

  ScratchDir dir("compare-lib");
  const auto garbage = dir.write("g.json", "{\"schema\": ");
  try {
    load_compare_entries(garbage);
    ADD_FAILURE() << "garbage was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(garbage.string() + ": not valid JSON: "), std::string::npos) << e.what();
  }
}

TEST(Compare, MatchesSweepPointsByOverridesNotByOrder) {
  const json base = sweep({sweep_point("a", 2, result("projected", 8, 100, 1)),
                           sweep_point("b", 4, result("projected", 8, 200, 2))});
  const json now = sweep({sweep_point("b", 4, result("projected", 8, 220, 2)),
                          sweep_point("a", 2, result("projected", 8, 100, 1))});
  const Comparison c = compare(base, now);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].label, "fig:a");
  EXPECT_DOUBLE_EQ(*c.rows[0].tflops.delta_pct, 0.0);
  EXPECT_EQ(c.rows[1].label, "fig:b");
  EXPECT_DOUBLE_EQ(*c.rows[1].tflops.delta_pct, 10.0);
  EXPECT_TRUE(c.only_in_base.empty() && c.only_in_new.empty() && c.mode_differs.empty());
}

TEST(Compare, DeltasAreRelativePercentAndAbsentFiguresGiveNone) {
  json base = result("measured", 8, 200, 2), now = result("measured", 8, 150, 2.5);
  now["metrics"]["memory_bytes"]["model"]["total"] = 1100.0;  // peak_measured null: the model's total
  base["metrics"]["bubble"]["measured"] = 0.2;                // measured preferred over simulated
  now["metrics"]["bubble"]["measured"] = 0.1;
  const Comparison c = compare(base, now);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*c.rows[0].tflops.delta_pct, -25.0);
  EXPECT_DOUBLE_EQ(*c.rows[0].iteration_s.delta_pct, 25.0);
  EXPECT_DOUBLE_EQ(*c.rows[0].memory.delta_pct, 10.0);
  EXPECT_DOUBLE_EQ(*c.rows[0].bubble.delta_pct, -50.0);

  now["metrics"]["memory_bytes"]["peak_measured"] = 5000.0;  // measured peak preferred, on each side alone
  now["metrics"]["model_tflops_per_gpu"] = nullptr;
  now["metrics"].erase("bubble");
  const Comparison d = compare(base, now);
  EXPECT_DOUBLE_EQ(*d.rows[0].memory.delta_pct, 400.0);
  EXPECT_FALSE(d.rows[0].tflops.delta_pct.has_value());
  EXPECT_TRUE(d.rows[0].tflops.base.has_value());
  EXPECT_FALSE(d.rows[0].bubble.delta_pct.has_value());
}

TEST(Compare, RegressesOnlyBeyondTheThreshold) {
  // 200 -> 190 is exactly -5%; 1.0 -> 1.05 s is +5% up to rounding (5.000000000000004).
  EXPECT_EQ(compare(result("measured", 8, 200, 1), result("measured", 8, 190, 1.05)).regressions, 0);
  EXPECT_EQ(compare(result("measured", 8, 200, 1), result("measured", 8, 189.98, 1)).regressions, 1);
  EXPECT_EQ(compare(result("measured", 8, 200, 1), result("measured", 8, 200, 1.0502)).regressions, 1);
  EXPECT_EQ(compare(result("measured", 8, 200, 1), result("measured", 8, 300, 0.5)).regressions, 0);
  EXPECT_EQ(compare(result("measured", 8, 200, 1), result("measured", 8, 180, 1), 10).regressions, 0);
  EXPECT_EQ(compare(result("measured", 8, 200, 1), result("measured", 8, 200, 1.0001), 0).regressions, 1);
  CompareRow memory_only;  // memory and bubble are never gated
  memory_only.memory.delta_pct = 500;
  memory_only.bubble.delta_pct = 500;
  EXPECT_FALSE(regresses(memory_only, 5));
}

TEST(Compare, EntriesOnOneSideAreListedNotRegressions) {
  const json base = sweep({sweep_point("a", 2, result("projected", 8, 100, 1)),
                           sweep_point("gone", 16, result("projected", 8, 100, 1))});
  const json now = sweep({sweep_point("a", 2, result("projected", 8, 100, 1)),
                          sweep_point("new1", 32, result("projected", 8, 1, 100)),
                          sweep_point("new2", 64, result("projected", 8, 1, 100))});
  const Comparison c = compare(base, now);
  EXPECT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.regressions, 0);
  EXPECT_EQ(c.only_in_base, std::vector<std::string>{"fig:gone (projected)"});
  EXPECT_EQ(c.only_in_new, (std::vector<std::string>{"fig:new1 (projected)", "fig:new2 (projected)"}));
  EXPECT_EQ(compare(result("measured", 8, 100, 1), result("measured", 4, 100, 1)).only_in_new.size(), 1u);
}

TEST(Compare, AMeasuredResultIsNeverComparedWithAProjectedOne) {
  const Comparison c = compare(result("measured", 8, 200, 1), result("projected", 8, 100, 2));
  EXPECT_TRUE(c.rows.empty());
  EXPECT_EQ(c.regressions, 0);
  ASSERT_EQ(c.mode_differs.size(), 1u);
  EXPECT_EQ(c.mode_differs[0].base_mode, ResultMode::measured);
  EXPECT_EQ(c.mode_differs[0].new_mode, ResultMode::projected);
  EXPECT_TRUE(c.only_in_base.empty() && c.only_in_new.empty());
}

TEST(Compare, ASweepWithBothModesMatchesEachModeWithItsOwn) {
  json m = sweep_point("a", 2, result("measured", 8, 100, 1)), p = sweep_point("a", 2, result("projected", 8, 120, 1));
  const Comparison c = compare(sweep({m, p}), sweep({p, m}));
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].mode, ResultMode::measured);
  EXPECT_DOUBLE_EQ(*c.rows[0].tflops.delta_pct, 0.0);
  EXPECT_TRUE(c.mode_differs.empty());
}

TEST(Compare, ToJsonCarriesRowsAndCounts) {
  const json j = to_json(compare(result("measured", 8, 200, 1), result("measured", 8, 100, 1)));
  EXPECT_EQ(j["schema"], "ptdp.compare/1");
  EXPECT_EQ(j["matched"], 1);
  EXPECT_EQ(j["regressions"], 1);
  EXPECT_EQ(j["rows"][0]["regressed"], true);
  EXPECT_DOUBLE_EQ(j["rows"][0]["model_tflops_per_gpu"]["delta_pct"].get<double>(), -50.0);
  EXPECT_DOUBLE_EQ(j["rows"][0]["bubble"]["delta_pct"].get<double>(), 0.0);
  EXPECT_TRUE(j["only_in_base"].empty());
}

// --- `ptdp compare` end to end ---------------------------------------------

test::Run run_compare(const ScratchDir& dir, const json& base, const json& now, const std::string& options = "") {
  const auto b = dir.write("base.json", base.dump()), n = dir.write("new.json", now.dump());
  return test::run_command(test::ptdp_cli() + " compare " + b.string() + " " + n.string() + " " + options, dir);
}

TEST(CliCompare, IdenticalFilesPass) {
  ScratchDir dir("compare-same");
  const auto r = run_compare(dir, result("measured", 8, 150, 2), result("measured", 8, 150, 2), "--out c.json");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 matched, 0 regressed beyond 5%; 0 only in base, 0 only in new"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
  const auto j = json::parse(test::read_file(dir.path() / "c.json"));
  EXPECT_EQ(j["regressions"], 0);
  EXPECT_EQ(j["rows"].size(), 1u);
}

TEST(CliCompare, ATenPercentDropFailsAtFivePercent) {
  ScratchDir dir("compare-drop");
  const auto r = run_compare(dir, result("measured", 8, 150, 2), result("measured", 8, 135, 2), "--out c.json");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("t8 p2 d1 b1 v2 interleaved"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("150.0 → 135.0 (-10.0%)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("REGRESSION"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 matched, 1 regressed beyond 5%"), std::string::npos) << r.out;
  EXPECT_EQ(json::parse(test::read_file(dir.path() / "c.json"))["regressions"], 1);
}

TEST(CliCompare, TheSameDropPassesAtFifteenPercent) {
  ScratchDir dir("compare-drop15");
  const auto r = run_compare(dir, result("measured", 8, 150, 2), result("measured", 8, 135, 2), "--threshold 15");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("(-10.0%)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 matched, 0 regressed beyond 15%"), std::string::npos) << r.out;
}

TEST(CliCompare, MeasuredAgainstProjectedIsRefused) {
  ScratchDir dir("compare-mode");
  const auto r = run_compare(dir, result("measured", 8, 150, 2), result("projected", 8, 150, 2));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("mode differs"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("measured in BASE but projected in NEW"), std::string::npos) << r.err;
}

TEST(CliCompare, UnreadableInputIsRefused) {
  ScratchDir dir("compare-bad");
  const auto garbage = dir.write("garbage.json", "not json at all");
  const auto good = dir.write("good.json", result("measured", 8, 150, 2).dump());
  auto r = test::run_command(test::ptdp_cli() + " compare " + good.string() + " " + garbage.string(), dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("garbage.json: not valid JSON"), std::string::npos) << r.err;
  r = run_compare(dir, result("measured", 8, 150, 2), {{"schema", "ptdp.sweep/1"}});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("not a ptdp result: schema \"ptdp.sweep/1\""), std::string::npos) << r.err;
  r = test::run_command(test::ptdp_cli() + " compare " + good.string() + " missing.json", dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  r = test::run_command(test::ptdp_cli() + " compare " + good.string() + " " + good.string() + " --threshold -1", dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
}

TEST(CliCompare, SweepsListPointsOnOneSideAndStillPass) {
  ScratchDir dir("compare-sweep");
  const json base = sweep({sweep_point("(2,8)", 2, result("projected", 8, 100, 1))});
  const json now = sweep({sweep_point("(2,8)", 2, result("projected", 8, 99, 1)),
                          sweep_point("(4,8)", 4, result("projected", 8, 50, 2))});
  const auto r = run_compare(dir, base, now);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("only in NEW: fig:(4,8) (projected)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 matched, 0 regressed beyond 5%; 0 only in base, 1 only in new"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ptdp

namespace ptdp {
namespace {

TEST(CliCompare, NothingMatchedIsRefused) {
  ScratchDir dir("compare-nothing");
  const json base = sweep({sweep_point("(2,8)", 2, result("projected", 8, 100, 1))});
  const json now = sweep({sweep_point("(4,8)", 4, result("projected", 8, 100, 1))});
  const auto r = run_compare(dir, base, now);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("nothing was compared"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ptdp
