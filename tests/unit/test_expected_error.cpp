// Every projection's expected error and sensitivity: the expected error is the
// committed validation's (results/paper-validation.json), recomputed here from
// the points' plans without the library's classes; the time shares sum to 1
// and the most sensitive rate is named; a missing validation is said, not fatal.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/sim/expected_error.h"
#include "core/sim/projector.h"
#include "core/sim/sensitivity.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using json = nlohmann::json;

// The 175B model on 96 A100s: t = 8 (within a DGX node), p = 12.
Config gpt3_on_a100() {
  Config c;
  c.model = {96, 12288, 96, 2048, 51200, 0, 0.0};
  c.plan.tp = 8, c.plan.pp = 12, c.plan.dp = 1, c.plan.micro_batch = 1, c.plan.global_batch = 96;
  c.plan.precision = Precision::fp16;
  c.plan.recompute = Recompute::full;
  c.machine = load_machine("a100-80gb", default_machines_dir());
  return c;
}

struct Stats {
  int n = 0;
  double mean_abs = 0, max_abs = 0;
};

// The committed validation's throughput points whose plan matches `keep`.
template <typename Keep>
Stats committed_stats(Keep keep) {
  const json v = parse_json_file(default_validation_file(), "validation");
  Stats s;
  for (const auto& e : v["experiments"]) {
    if (e["metric"] != "model_tflops_per_gpu" && e["metric"] != "sequences_per_s") continue;
    for (const auto& p : e["points"]) {
      if (!keep(p["plan"]["tp"].get<int>(), p["plan"]["pp"].get<int>())) continue;
      const double error = std::abs(p["error"].get<double>());
      ++s.n, s.mean_abs += error, s.max_abs = std::max(s.max_abs, error);
    }
  }
  if (s.n > 0) s.mean_abs /= s.n;
  return s;
}

void expect_block(const json& e, const Stats& s, const char* matched) {
  EXPECT_EQ(e["matched"], matched);
  ASSERT_GT(s.n, 0);
  EXPECT_EQ(e["n"].get<int>(), s.n);
  EXPECT_NEAR(e["mean_abs_error"].get<double>(), s.mean_abs, 1e-12);
  EXPECT_NEAR(e["max_abs_error"].get<double>(), s.max_abs, 1e-12);
  EXPECT_EQ(e["source"], "results/paper-validation.json");
}

TEST(ExpectedError, ProjectionCarriesTheCommittedValidationsErrorsForItsClass) {
  const Config c = gpt3_on_a100();
  const RunResult r = projected_result(c, project(c, nullptr), nullptr);
  ASSERT_TRUE(r.expected_error);
  const json& e = *r.expected_error;
  EXPECT_EQ(e["class"], json({{"machine", "a100-80gb"}, {"pp_range", "9+"}, {"tp_span", "within_node"}}));
  // Every committed point with 2 ≤ t ≤ 8 and p ≥ 9 (the validation is all on a100-80gb).
  expect_block(e, committed_stats([](int tp, int pp) { return tp > 1 && tp <= 8 && pp >= 9; }), "class");
  EXPECT_GE(e["n"].get<int>(), kMinClassPoints);
  EXPECT_EQ(to_json(r)["expected_error"], e);
}

TEST(ExpectedError, ASmallClassFallsBackToEveryPointOfTheMachineAndSaysSo) {
  Config c = gpt3_on_a100();
  c.plan.tp = 1, c.plan.pp = 16;  // t = 1, p ≥ 9: fewer than kMinClassPoints published points
  ASSERT_LT(committed_stats([](int tp, int pp) { return tp == 1 && pp >= 9; }).n, kMinClassPoints);
  const json e = expected_error(c, default_validation_file());
  expect_block(e, committed_stats([](int, int) { return true; }), "machine");
  EXPECT_NE(e["note"].get<std::string>().find("a100-80gb"), std::string::npos) << e;
}

TEST(ExpectedError, AMachineWithoutPublishedPointsOrAMissingFileGivesNullWithTheReason) {
  Config c = gpt3_on_a100();
  c.machine = load_machine("h100-80gb", default_machines_dir());
  json e = expected_error(c, default_validation_file());
  EXPECT_EQ(e["n"], 0);
  EXPECT_TRUE(e["mean_abs_error"].is_null());
  EXPECT_NE(e["note"].get<std::string>().find("h100-80gb"), std::string::npos) << e;
  e = expected_error(gpt3_on_a100(), "/nonexistent/validation.json");
  EXPECT_TRUE(e["matched"].is_null());
  EXPECT_TRUE(e["max_abs_error"].is_null());
  EXPECT_NE(e["note"].get<std::string>().find("validation.json: cannot be read"), std::string::npos) << e;
}

TEST(Sensitivity, SharesSumToOneAndTheMostSensitiveRateIsNamed) {
  const Config c = gpt3_on_a100();
  const Projection p = project(c, nullptr);
  const json s = *projected_result(c, p, nullptr).sensitivity;
  double sum = 0;
  for (const auto& [name, share] : s["shares"].items()) {
    EXPECT_GE(share.get<double>(), 0) << name;
    sum += share.get<double>();
  }
  EXPECT_NEAR(sum, 1.0, 1e-9);
  EXPECT_EQ(s["shares"].size(), 8u);
  // The forwards' and backwards' time split by kind adds up to the breakdown's.
  EXPECT_NEAR(p.passes.total(), p.breakdown.compute + p.breakdown.tp_comm, 1e-9 * p.iteration_s);
  EXPECT_GT(s["shares"]["gemm"].get<double>(), 0.5);  // 175B: GEMM-bound
  const json& most = s["most_sensitive"];
  const auto names = sensitivity_parameters(c);
  EXPECT_TRUE(std::set<std::string>(names.begin(), names.end()).contains(most["parameter"].get<std::string>())) << most;
  // GEMM-bound: a 10% slower peak (or GEMM efficiency) costs most, about 10%.
  EXPECT_TRUE(most["parameter"] == "peak_tflops.fp16" || most["parameter"] == "efficiency.gemm") << most;
  EXPECT_GT(most["change"].get<double>(), 0.05);
  for (const auto& [name, changes] : s["parameters"].items())
    EXPECT_LE(std::abs(changes[0].get<double>()), most["change"].get<double>()) << name;
}

TEST(ExpectedError, BareProjectionsForTheValidationCarryNeither) {
  const Config c = gpt3_on_a100();
  const RunResult r = projected_result(c, project(c, nullptr), nullptr, Annotations::none);
  EXPECT_FALSE(r.expected_error);
  EXPECT_FALSE(to_json(r).contains("sensitivity"));
}

TEST(CliProject, PrintsExpectedErrorAndSensitivity) {
  test::ScratchDir dir("project-trust");
  const json cfg = {{"model", to_json(gpt3_on_a100().model)}, {"plan", to_json(gpt3_on_a100().plan)},
                    {"machine", "a100-80gb"}};
  const auto r = test::run_command(test::ptdp_cli() + " project --config " + dir.write("c.json", cfg.dump()).string(),
                                   dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("expected error: mean |error|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("published points (class a100-80gb, pp 9+, tp within_node)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("time shares: gemm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("most sensitive: "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ptdp
