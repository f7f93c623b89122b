// The one result type: its JSON keys, the reader taking a result back whole,
// and the reader's refusals naming the field.
#include <gtest/gtest.h>

#include "core/results/result.h"
#include "core/results/result_io.h"
#include "core/sim/projector.h"

namespace ptdp {
namespace {

Config pipeline_config() {
  Config c;
  c.model = {8, 1024, 16, 512, 8192, 4096, 0.0};
  c.plan.pp = 4, c.plan.micro_batch = 1, c.plan.global_batch = 8;
  c.plan.precision = Precision::bf16;
  c.machine = load_machine("h100-80gb", default_machines_dir());
  return c;
}

TEST(Result, ProjectedResultHasEveryKeyOfTheMeasuredOne) {
  const Config c = pipeline_config();
  const nlohmann::json j = to_json(projected_result(c, project(c, nullptr), nullptr));
  EXPECT_EQ(j["schema"], "ptdp.result/2");
  EXPECT_EQ(j["mode"], "projected");
  const auto& m = j["metrics"];
  EXPECT_EQ(m["bubble"]["per_stage"]["simulated"].size(), 4u);
  EXPECT_TRUE(m["bubble"]["measured"].is_null());
  EXPECT_TRUE(m["bubble"]["per_stage"]["measured"].is_null());
  EXPECT_EQ(m["memory_bytes"]["per_stage"]["model"].size(), 4u);
  EXPECT_TRUE(m["memory_bytes"]["peak_measured"].is_null());
  EXPECT_TRUE(m["communication"].is_null());
  EXPECT_TRUE(m["loss"].is_null() && m["lr"].is_null());  // a projection knows no per-iteration figures
  EXPECT_GT(m["breakdown_s"]["compute"].get<double>(), 0);
  // peak_model is the largest stage; stage 0 holds the most micro-batches in flight under 1F1B.
  EXPECT_EQ(m["memory_bytes"]["peak_model"], m["memory_bytes"]["per_stage"]["model"][0]["total"]);
}

TEST(Result, ReaderTakesAResultBackWhole) {
  const Config c = pipeline_config();
  RunResult r = projected_result(c, project(c, nullptr), nullptr);
  r.mode = ResultMode::measured;
  r.iteration_s = {0.5, 0.25, 0.75};
  r.bubble.measured = 0.2;
  r.bubble.measured_per_stage = {0.1, 0.2, 0.3, 0.2};
  r.memory.peak_measured = 12345;
  r.memory.measured_per_rank = {12345, 1, 2, 3};
  r.memory.device_per_rank["pool_used_peak"] = {5, 6, 7, 8};
  r.communication = CommunicationFigures{1, 2, 3, 4};
  r.loss = {3.0, 2.5};
  r.lr = {0.0, 0.001};
  r.projected = std::make_shared<RunResult>(projected_result(c, project(c, nullptr), nullptr));
  r.extra["timeline"] = "trace.json";
  const nlohmann::json j = to_json(r);
  const RunResult back = read_result(j);
  EXPECT_EQ(back.mode, ResultMode::measured);
  EXPECT_EQ(back.config.plan.pp, 4);
  EXPECT_DOUBLE_EQ(back.median_iteration_s(), 0.5);
  EXPECT_EQ(back.lr, r.lr);
  ASSERT_TRUE(back.projected);
  ASSERT_TRUE(back.projected->expected_error && back.projected->sensitivity);  // in the "projected" block
  EXPECT_TRUE(j["projected"].contains("expected_error") && j["projected"].contains("sensitivity"));
  EXPECT_EQ(to_json(back), j);
}

TEST(Result, ReaderNamesTheField) {
  const Config c = pipeline_config();
  nlohmann::json j = to_json(projected_result(c, project(c, nullptr), nullptr));
  const auto refusal = [](const nlohmann::json& doc) {
    try {
      read_result(doc);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  nlohmann::json bad = j;
  bad["metrics"]["bubble"]["simulated"] = "high";
  EXPECT_EQ(refusal(bad), "result: /metrics/bubble/simulated: must be a number (got \"high\")");
  bad = j;
  bad["mode"] = "guessed";
  EXPECT_EQ(refusal(bad).rfind("result: /mode: must be measured, projected or slice (got", 0), 0u) << refusal(bad);
  bad = j;
  bad["schema"] = "ptdp.result/1";
  EXPECT_NE(refusal(bad).find("old schema"), std::string::npos);
  bad = j;
  bad["plan"]["tp"] = "eight";
  EXPECT_EQ(refusal(bad).rfind("result: /plan/tp: plan.tp must be an integer", 0), 0u) << refusal(bad);
  bad = j;
  bad["metrics"]["memory_bytes"].erase("per_stage");
  EXPECT_EQ(refusal(bad), "result: /metrics/memory_bytes/per_stage: is missing");
}

TEST(Result, ModesHaveOneSpelling) {
  for (const ResultMode m : {ResultMode::measured, ResultMode::projected, ResultMode::slice})
    EXPECT_EQ(parse_result_mode(to_string(m)), m);
  EXPECT_FALSE(parse_result_mode("Measured"));
}

}  // namespace
}  // namespace ptdp
