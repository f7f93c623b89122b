// A figure of a result read by its path under "metrics", dotted
// ("model_tflops_per_gpu", "memory_bytes.peak_measured"): the one way the
// gate (compare, history) and sweeps (their metric, expect bands) read one.
// The names are those the result writer (result.cpp) puts under "metrics";
// any other is refused, naming it, so a typo never reads as a missing figure.
#pragma once
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptdp {

// A metric name no result reports; what() names it and lists the known ones.
struct UnknownMetric : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

class MetricPath {
 public:
  // Throws UnknownMetric unless `name` is one of metric_names().
  explicit MetricPath(const std::string& name);
  const std::string& name() const { return name_; }
  // result["metrics"] at the path, when it is a finite number; nothing where
  // it is absent, null, not a number, or `result` is no object.
  std::optional<double> of(const nlohmann::json& result) const;

 private:
  std::string name_;
  std::vector<std::string> keys_;  // name_ split at its dots
};

// Every metric a result reports: the number (or null: unknown to its mode)
// leaves of the writer's "metrics" block, dotted, in the writer's order.
const std::vector<std::string>& metric_names();
// Why `name` is not a metric (UnknownMetric's text), or "" when it is.
std::string unknown_metric(const std::string& name);

// The value at `path` under `j`, or nullptr where a step is missing or not an object.
const nlohmann::json* json_at_path(const nlohmann::json& j, std::initializer_list<std::string_view> path);
// A result's metrics.iteration_s.samples; empty unless a list of numbers.
std::vector<double> iteration_samples(const nlohmann::json& result);

}  // namespace ptdp
