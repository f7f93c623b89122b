// Expected error of a projection from the validation's points of its class.
#include "core/sim/expected_error.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/accounting/throughput.h"
#include "core/config/data_root.h"
#include "core/config/json_read.h"

namespace ptdp {

namespace {

using json = nlohmann::json;

bool is_throughput_metric(const std::string& name) {
  return std::find(kThroughputMetricNames.begin(), kThroughputMetricNames.end(), name) != kThroughputMetricNames.end();
}

std::string pp_range(int pp) { return pp <= 1 ? "1" : pp <= 8 ? "2-8" : "9+"; }

std::string tp_span(int tp, int gpus_per_node) {
  return tp <= 1 ? "none" : tp <= gpus_per_node ? "within_node" : "across_nodes";
}

ErrorClass class_of(const JsonAt& j) {
  return {j.at("machine").get<std::string>(), j.at("pp_range").get<std::string>(), j.at("tp_span").get<std::string>()};
}

// The file as the result names it: relative to the source tree when inside it,
// so committed results do not carry the checkout's path.
std::string source_name(const std::filesystem::path& file) {
  const auto rel = file.lexically_normal().lexically_relative(data_root().lexically_normal());
  return !rel.empty() && *rel.begin() != ".." ? rel.generic_string() : file.string();
}

json unavailable(const Config& cfg, const std::string& source, const std::string& reason) {
  return {{"source", source},         {"class", to_json(error_class(cfg))}, {"matched", nullptr},
          {"n", 0},                   {"mean_abs_error", nullptr},          {"max_abs_error", nullptr},
          {"mean_error", nullptr},    {"note", reason}};
}

}  // namespace

ErrorClass error_class(const Config& cfg) {
  return {cfg.machine.name, pp_range(cfg.plan.pp), tp_span(cfg.plan.tp, cfg.machine.gpus_per_node)};
}

json to_json(const ErrorClass& c) {
  return {{"machine", c.machine}, {"pp_range", c.pp_range}, {"tp_span", c.tp_span}};
}

std::vector<ClassifiedError> read_validation_errors(const json& validation) {
  const JsonAt v(validation, "validation");
  std::vector<ClassifiedError> out;
  for (const JsonAt& e : v.at("experiments").elements()) {
    if (!is_throughput_metric(e.get<std::string>("metric", ""))) continue;
    if (const auto points = e.find("points"))
      for (const JsonAt& p : points->elements()) {
        if (!p.object().find("class"))
          p.refuse("carries no \"class\" (written before expected errors; rerun ptdp validate)");
        out.push_back({class_of(p.at("class")), p.at("error").get<double>()});
      }
  }
  return out;
}

json expected_error(const Config& cfg, const std::vector<ClassifiedError>& points, const std::string& source) {
  const ErrorClass cls = error_class(cfg);
  std::vector<double> same_class, same_machine;
  for (const auto& p : points) {
    if (p.cls.machine != cls.machine) continue;
    same_machine.push_back(p.error);
    if (p.cls == cls) same_class.push_back(p.error);
  }
  if (same_machine.empty()) return unavailable(cfg, source, "no published point on machine \"" + cls.machine + "\"");
  const bool fallback = static_cast<int>(same_class.size()) < kMinClassPoints;
  const std::vector<double>& errors = fallback ? same_machine : same_class;
  double mean_abs = 0, max_abs = 0, mean = 0;
  for (const double e : errors) {
    mean_abs += std::abs(e) / static_cast<double>(errors.size());
    mean += e / static_cast<double>(errors.size());
    max_abs = std::max(max_abs, std::abs(e));
  }
  const std::string note = fallback ? "class has " + std::to_string(same_class.size()) + " published points (fewer than " +
                                          std::to_string(kMinClassPoints) + "): every point of \"" + cls.machine + "\" used"
                                    : "";
  return {{"source", source},
          {"class", to_json(cls)},
          {"matched", fallback ? "machine" : "class"},
          {"n", errors.size()},
          {"mean_abs_error", mean_abs},
          {"max_abs_error", max_abs},
          {"mean_error", mean},
          {"note", note.empty() ? json(nullptr) : json(note)}};
}

json expected_error(const Config& cfg, const std::filesystem::path& file) {
  std::vector<ClassifiedError> points;
  try {
    points = read_validation_errors(parse_json_file(file, "validation"));
  } catch (const std::runtime_error& e) {  // ConfigRefused too: missing or not JSON
    return unavailable(cfg, source_name(file), std::string("no validation errors: ") + e.what());
  }
  return expected_error(cfg, points, source_name(file));
}

}  // namespace ptdp
