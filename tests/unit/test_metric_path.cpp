// Reading a result's metric by its path: the names come from the result
// writer, an unknown one is refused naming it, and a figure that is absent,
// null or not a number reads as nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/accounting/throughput.h"
#include "core/config/json_read.h"
#include "core/results/metric_path.h"
#include "core/results/result.h"
#include "core/sim/projector.h"

namespace ptdp {
namespace {

using json = nlohmann::json;

bool known(const std::string& name) {
  const auto& names = metric_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The dotted paths of the numbers under `j` (the checkpoint's "filesystem"
// describes where, not how fast: it holds the profile's figures, no metric).
void numbers_under(const json& j, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, v] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (path == "checkpoint.filesystem") continue;
    if (v.is_object()) numbers_under(v, path, out);
    else if (v.is_number()) out.push_back(path);
  }
}

TEST(MetricPath, TheNamesAreTheWritersFiguresNotItsListsTextsOrFlags) {
  for (const char* name : {"model_tflops_per_gpu", "iteration_s.median", "memory_bytes.peak_measured",
                           "memory_bytes.model.total", "bubble.measured", "bubble.analytical", "mfu", "hfu",
                           "tokens_per_s", "sequences_per_s", "flops_per_iteration.model", "checkpoint.save_s",
                           "checkpoint.load_gbs", "checkpoint.bytes_total", "breakdown_s.compute",
                           "communication.tp_bytes", "utilization.peak_tflops"})
    EXPECT_TRUE(known(name)) << name;
  for (const char* name : {"iteration_s.samples", "loss", "model_flops_convention", "memory_bytes.fits",
                           "memory_bytes.formula", "bubble.per_stage.measured", "peak_source", "iteration_s", ""})
    EXPECT_FALSE(known(name)) << name;
}

TEST(MetricPath, EveryNumberOfAProjectedAndAMeasuredResultIsAKnownMetric) {
  const Config c = load_config(std::string(PTDP_SOURCE_DIR) + "/endtoend/configs/gpt-1.7b-h100.json",
                               default_machines_dir());
  std::vector<std::string> numbers;
  numbers_under(to_json(projected_result(c, project(c, nullptr), nullptr))["metrics"], "", numbers);
  numbers_under(read_json_file(std::filesystem::path(PTDP_SOURCE_DIR) / "tests" / "gate" / "base.json")["metrics"], "",
                numbers);
  ASSERT_GT(numbers.size(), 30u);
  for (const std::string& n : numbers) EXPECT_TRUE(known(n)) << n;
}

TEST(MetricPath, ReadsAFiniteNumberAtItsPathAndNothingElse) {
  const json r = {{"metrics",
                   {{"model_tflops_per_gpu", 12.5},
                    {"iteration_s", {{"median", 2}}},
                    {"bubble", {{"measured", nullptr}, {"simulated", "fast"}}},
                    {"memory_bytes", 3}}}};
  EXPECT_EQ(MetricPath("model_tflops_per_gpu").of(r), 12.5);
  EXPECT_EQ(MetricPath("iteration_s.median").of(r), 2.0);
  EXPECT_EQ(MetricPath("bubble.measured").of(r), std::nullopt);       // null
  EXPECT_EQ(MetricPath("bubble.simulated").of(r), std::nullopt);      // not a number
  EXPECT_EQ(MetricPath("memory_bytes.peak_measured").of(r), std::nullopt);  // a step that is no object
  EXPECT_EQ(MetricPath("mfu").of(r), std::nullopt);                   // absent
  EXPECT_EQ(MetricPath("mfu").of(json(3)), std::nullopt);             // not a result
  EXPECT_EQ(MetricPath("mfu").of(json{{"metrics", {{"mfu", std::nan("")}}}}), std::nullopt);
  EXPECT_EQ(MetricPath("iteration_s.median").name(), "iteration_s.median");
}

TEST(MetricPath, TheThroughputFiguresExpectedErrorsApplyToAreMetrics) {
  for (const std::string_view name : kThroughputMetricNames)
    EXPECT_EQ(unknown_metric(std::string(name)), "") << name;
}

TEST(MetricPath, AnUnknownNameIsRefusedNamingIt) {
  try {
    MetricPath("model_tflop_per_gpu");
    FAIL() << "an unknown metric was taken";
  } catch (const UnknownMetric& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown metric \"model_tflop_per_gpu\""), std::string::npos) << what;
    EXPECT_NE(what.find("model_tflops_per_gpu"), std::string::npos) << what;  // the known ones listed
  }
  EXPECT_THROW(MetricPath("metrics.mfu"), UnknownMetric);  // the path is under "metrics", not from the top
  EXPECT_EQ(unknown_metric("mfu"), "");
  EXPECT_NE(unknown_metric("mfu."), "");
}

TEST(MetricPath, IterationSamplesAreTheListOrNothing) {
  EXPECT_EQ(iteration_samples(json{{"metrics", {{"iteration_s", {{"samples", {1.0, 2.0}}}}}}}),
            (std::vector<double>{1.0, 2.0}));
  EXPECT_TRUE(iteration_samples(json{{"metrics", {{"iteration_s", {{"samples", nullptr}}}}}}).empty());
  EXPECT_TRUE(iteration_samples(json::object()).empty());
}

}  // namespace
}  // namespace ptdp
