// `ptdp project` and `ptdp validate` end to end: results of the measured
// schema with mode "projected", the search, and refused input.
#include <gtest/gtest.h>

#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;

nlohmann::json gpt_on_a100() {
  return nlohmann::json::parse(R"({
    "model": {"layers": 24, "hidden": 2304, "heads": 24, "seq_len": 2048, "vocab": 51200},
    "plan": {"tp": 2, "pp": 2, "dp": 2, "micro_batch": 1, "global_batch": 64, "precision": "bf16",
             "recompute": "full"},
    "machine": "a100-80gb"})");
}

TEST(CliProject, WritesAProjectedResultOfTheSameSchema) {
  ScratchDir dir("project");
  const auto config = dir.write("c.json", gpt_on_a100().dump());
  const auto r = test::run_command(test::ptdp_cli() + " project --config " + config.string() +
                                       " --out r.json --trace t.json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  EXPECT_EQ(j["schema"], "ptdp.result/2");
  EXPECT_EQ(j["mode"], "projected");
  EXPECT_TRUE(j["projection"]["calibration"].is_null());
  const auto& m = j["metrics"];
  EXPECT_GT(m["model_tflops_per_gpu"].get<double>(), 0);
  EXPECT_GT(m["percent_of_peak"].get<double>(), 0);
  EXPECT_GT(m["breakdown_s"]["compute"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(m["bubble"]["analytical"].get<double>(), 1.0 / 32);
  EXPECT_GT(m["bubble"]["simulated"].get<double>(), 0);
  EXPECT_TRUE(m["memory_bytes"]["fits"].get<bool>());
  EXPECT_EQ(m["memory_bytes"]["per_stage"]["model"].size(), 2u);
  const auto trace = nlohmann::json::parse(test::read_file(dir.path() / "t.json"));
  EXPECT_GT(trace["traceEvents"].size(), 100u);
}

TEST(CliProject, SearchReportsTheBestPlanAndRunnersUp) {
  ScratchDir dir("search");
  const auto config = dir.write("c.json", gpt_on_a100().dump());
  const auto r = test::run_command(test::ptdp_cli() + " project --config " + config.string() +
                                       " --search-split --out r.json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("runner-up"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  EXPECT_GT(j["search"]["candidates"].get<int>(), 4);
  EXPECT_EQ(j["plan"]["tp"].get<int>() * j["plan"]["pp"].get<int>(), 4);
  for (const auto& other : j["search"]["runners_up"])
    EXPECT_GE(other["iteration_s"].get<double>(), j["metrics"]["iteration_s"]["median"].get<double>());
}

TEST(CliProject, RefusesBadInputNamingTheField) {
  ScratchDir dir("project-bad");
  auto cfg = gpt_on_a100();
  cfg["plan"]["tp"] = 5;
  auto r = test::run_command(test::ptdp_cli() + " project --config " + dir.write("a.json", cfg.dump()).string(), dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("plan.tp=5"), std::string::npos) << r.err;
  cfg = gpt_on_a100();
  cfg["machine"] = "tpu-v9";
  r = test::run_command(test::ptdp_cli() + " project --config " + dir.write("b.json", cfg.dump()).string(), dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("a100-80gb"), std::string::npos) << r.err;  // the known machines are listed
  cfg = gpt_on_a100();
  cfg["machine"] = "cpu-host";
  r = test::run_command(test::ptdp_cli() + " project --config " + dir.write("c.json", cfg.dump()).string(), dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("peak_tflops"), std::string::npos) << r.err;
  const auto calibration = dir.write("cal.json", "{\"schema\": \"ptdp.calibration/1\", \"gemms\": [{\"m\": 1}]}");
  r = test::run_command(test::ptdp_cli() + " project --config " + dir.write("d.json", gpt_on_a100().dump()).string() +
                            " --calibration " + calibration.string(), dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cal.json: /gemms/0/n: is missing"), std::string::npos) << r.err;
}

TEST(CliValidate, ComparesEveryPaperExperimentAndWritesJson) {
  ScratchDir dir("validate");
  const auto r = test::run_command(test::ptdp_cli() + " validate --quiet --out v.json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("table1"), std::string::npos);
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "v.json"));
  EXPECT_EQ(j["mode"], "projected");
  EXPECT_GE(j["experiments"].size(), 9u);
}

}  // namespace
}  // namespace ptdp
