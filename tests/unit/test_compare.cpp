// Comparing result files: reading both kinds, matching by configuration,
// deltas, the regression rule at its boundary, what cannot be judged.
#include <gtest/gtest.h>

#include <cmath>

#include "core/gate/compare.h"
#include "tests/cli_test_util.h"
#include "tests/compare_test_util.h"

namespace ptdp {
namespace {

using json = nlohmann::json;
using test::ScratchDir;
using test::result;
using test::sweep;
using test::sweep_point;

Comparison compare(const json& base, const json& now, double threshold = 5) {
  return compare_results(compare_entries(base, "base.json"), compare_entries(now, "new.json"), threshold);
}

std::string error_of(const json& doc) { return test::entries_refusal(doc, "x.json"); }

TEST(Compare, ReadsASingleResultAsOneEntry) {
  const auto entries = compare_entries(result("measured", 8, 100, 1), "r.json");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].mode, ResultMode::measured);
  EXPECT_EQ(entries[0].label, "t8 p2 d1 b1 v2 interleaved");
}

TEST(Compare, ReadsSweepPointsWithTheirStatus) {
  json failed = sweep_point("(4,8)", 4, nullptr);
  failed["reason"] = "killed by signal 9";
  const json s = sweep({sweep_point("(2,8)", 2, result("projected", 8, 100, 1)), failed,
                        sweep_point("(8,8)", 8, result("projected", 8, 90, 1))});
  const auto entries = compare_entries(s, "s.json");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].label, "fig:(2,8)");
  EXPECT_EQ(entries[0].status, Outcome::ok);
  EXPECT_EQ(entries[1].status, Outcome::failed);
  EXPECT_EQ(entries[1].reason, "killed by signal 9");
  EXPECT_TRUE(entries[1].result.is_null());
  EXPECT_EQ(entries[2].label, "fig:(8,8)");
  EXPECT_NE(entries[0].identity, entries[2].identity);
}

TEST(Compare, RefusesAnythingElseNamingTheFileAndTheProblem) {
  EXPECT_EQ(error_of({{"schema", "ptdp.sweep/1"}}), "x.json: not a ptdp result: schema \"ptdp.sweep/1\"");
  EXPECT_EQ(error_of({{"model", 1}}), "x.json: not a ptdp result: no \"schema\"");
  EXPECT_EQ(error_of(json::array()), "x.json: not a ptdp result: not a JSON object");
  EXPECT_EQ(error_of({{"schema", "ptdp.sweep-results/1"}}), "x.json: /points: is missing");
  json r = result("measured", 8, 100, 1);
  r.erase("plan");
  EXPECT_EQ(error_of(r), "x.json: /plan: is missing");
  json s = sweep({sweep_point("(2,8)", 2, result("projected", 8, 100, 1))});
  s["points"][0]["label"] = 3;
  EXPECT_EQ(error_of(s), "x.json: /points/0/label: must be a string (got 3)");

  ScratchDir dir("compare-lib");
  const auto garbage = dir.write("g.json", "{\"schema\": ");
  try {
    load_compare_entries(garbage);
    ADD_FAILURE() << "garbage was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(garbage.string() + ": /schema: not valid JSON: "), std::string::npos) << e.what();
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

TEST(Compare, DeltasAreRelativePercentAndAbsentReportedFiguresGiveNone) {
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
  now["metrics"].erase("bubble");  // reported, not gated: absent gives no delta
  const Comparison d = compare(base, now);
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*d.rows[0].memory.delta_pct, 400.0);
  EXPECT_TRUE(d.rows[0].bubble.base.has_value());
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

// Listed on their side; BASE's were dropped, which fails `ptdp compare` (test_compare_shape.cpp).
TEST(Compare, EntriesOnOneSideAreListed) {
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
  // Two single results of different configurations sit in one slot: a change of layout, not two entries.
  const Comparison single = compare(result("measured", 8, 100, 1), result("measured", 4, 100, 1));
  EXPECT_TRUE(single.only_in_new.empty());
  EXPECT_EQ(single.unusable.at(0), "t8 p2 d1 b1 v2 interleaved (measured): layout differs: plan.tp 8 in BASE, 4 in NEW");
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
  EXPECT_EQ(j["schema"], "ptdp.compare/2");
  EXPECT_EQ(j["matched"], 1);
  EXPECT_EQ(j["regressions"], 1);
  EXPECT_EQ(j["rows"][0]["regressed"], true);
  EXPECT_DOUBLE_EQ(j["rows"][0]["model_tflops_per_gpu"]["delta_pct"].get<double>(), -50.0);
  EXPECT_DOUBLE_EQ(j["rows"][0]["bubble"]["delta_pct"].get<double>(), 0.0);
  EXPECT_TRUE(j["only_in_base"].empty());
}

// A failed or unmeasured point, matched or on one side only, is never "0 regressed".
TEST(Compare, PointsWithoutAResultCannotBeJudged) {
  json timeout = sweep_point("b", 4, nullptr);
  timeout["status"] = "timeout";
  timeout["reason"] = "no result within 120 s";
  json refused = sweep_point("c", 8, nullptr);
  refused["status"] = "refused";
  const json base = sweep({sweep_point("a", 2, result("projected", 8, 100, 1)),
                           sweep_point("b", 4, result("projected", 8, 100, 1))});
  Comparison c = compare(base, sweep({sweep_point("a", 2, result("projected", 8, 100, 1)), timeout, refused}));
  EXPECT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.unusable, (std::vector<std::string>{"fig:b (projected): NEW is timeout (no result within 120 s)",
                                                  "fig:c (projected): NEW is refused"}));
  c = compare(sweep({sweep_point("a", 2, result("projected", 8, 100, 1)), timeout}), base);
  EXPECT_EQ(c.unusable, std::vector<std::string>{"fig:b (projected): BASE is timeout (no result within 120 s)"});
  json ok_without_result = sweep_point("a", 2, nullptr);
  ok_without_result["status"] = "ok";
  c = compare(base, sweep({ok_without_result}));
  ASSERT_FALSE(c.unusable.empty());
  EXPECT_EQ(c.unusable.front(), "fig:a (projected): NEW has no result");
}

TEST(Compare, GatedFiguresMustBeFinitePositiveNumbersOnBothSides) {
  const json good = result("measured", 8, 150, 2);
  json now = good;
  now["metrics"]["model_tflops_per_gpu"] = nullptr;
  now["metrics"]["iteration_s"].erase("median");
  Comparison c = compare(good, now);
  EXPECT_TRUE(c.rows.empty());
  ASSERT_EQ(c.unusable.size(), 1u);
  EXPECT_EQ(c.unusable[0], "t8 p2 d1 b1 v2 interleaved (measured): NEW metrics.model_tflops_per_gpu is null; "
                           "NEW metrics.iteration_s.median is missing");
  json base = good;
  base["metrics"] = 7;
  EXPECT_EQ(compare(base, good).unusable.at(0),
            "t8 p2 d1 b1 v2 interleaved (measured): BASE metrics is not an object (got 7)");
  base = good;
  base["metrics"]["model_tflops_per_gpu"] = "fast";
  base["metrics"]["iteration_s"]["median"] = 0;
  EXPECT_EQ(compare(base, good).unusable.at(0),
            "t8 p2 d1 b1 v2 interleaved (measured): BASE metrics.model_tflops_per_gpu is not a number (got \"fast\"); "
            "BASE metrics.iteration_s.median is not a finite positive number (got 0)");
  now = good;
  now["metrics"]["model_tflops_per_gpu"] = INFINITY;  // no JSON text parses to it; a caller may still build one
  EXPECT_NE(compare(good, now).unusable.at(0).find("NEW metrics.model_tflops_per_gpu is not a finite positive number "
                                                   "(got inf)"),
            std::string::npos);
  now = good;
  now["metrics"]["memory_bytes"] = "lots";  // reported, not gated: shown as absent
  c = compare(good, now);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_FALSE(c.rows[0].memory.now.has_value());
  EXPECT_TRUE(c.unusable.empty());
}

TEST(Compare, APointThatNoLongerFitsRegresses) {
  json unfit = sweep_point("a", 2, result("projected", 8, 100, 1));
  unfit["status"] = "does_not_fit";
  const Comparison c = compare(sweep({sweep_point("a", 2, result("projected", 8, 100, 1))}), sweep({unfit}));
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_TRUE(c.rows[0].regressed);
  EXPECT_EQ(c.rows[0].note, "no longer fits in memory");
  EXPECT_EQ(c.regressions, 1);
  EXPECT_EQ(compare(sweep({unfit}), sweep({unfit})).regressions, 0);  // it never fitted: figures compared
}

TEST(Compare, AThresholdMustBeAFiniteNumber) {
  const json r = result("measured", 8, 150, 2);
  EXPECT_THROW(compare(r, r, std::nan("")), std::invalid_argument);
  EXPECT_THROW(compare(r, r, INFINITY), std::invalid_argument);
  EXPECT_THROW(compare(r, r, -1), std::invalid_argument);
}

}  // namespace
}  // namespace ptdp
