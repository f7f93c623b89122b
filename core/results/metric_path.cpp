// Metric paths: the names the result writer puts under "metrics", and reading one.
#include "core/results/metric_path.h"

#include <cmath>

#include "core/config/json_read.h"
#include "core/results/result.h"

namespace ptdp {

namespace {

using json = nlohmann::json;

// The value at `keys` under `j` (any range of things a std::string is made from).
template <typename Keys>
const json* walk(const json& j, const Keys& keys) {
  const json* cur = &j;
  for (const auto& key : keys) {
    if (!cur->is_object()) return nullptr;
    const auto it = cur->find(std::string(key));
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

// A result with every figure present, so its "metrics" block holds every key
// the writer can write: lists non-empty and strings set (neither is a
// metric), the figures a mode may not know set or left null.
RunResult every_figure() {
  RunResult r;
  r.config.machine.peak_tflops[to_string(r.config.plan.precision)] = 1;
  r.config.machine.sources["peak_tflops"] = "every_figure";
  r.iteration_s = r.loss = r.grad_norm = r.lr = {1};
  r.bubble.measured = r.bubble.simulated = r.bubble.idle_share = 1;
  r.bubble.measured_per_stage = r.bubble.simulated_per_stage = r.bubble.measured_per_rank = {1};
  r.memory.model_per_stage.resize(1);
  r.memory.peak_measured = 1;
  r.memory.measured_per_stage = r.memory.measured_per_rank = {1};
  r.breakdown.emplace();
  r.communication.emplace();
  r.checkpoint.emplace();
  r.checkpoint->filesystem = json::object();
  return r;
}

// The dotted paths of the number and null leaves under `j`, after `prefix`.
void add_leaves(const json& j, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, v] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (v.is_object()) add_leaves(v, path, out);
    else if (v.is_number() || v.is_null()) out.push_back(path);
  }
}

}  // namespace

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    add_leaves(to_json(every_figure())["metrics"], "", out);
    return out;
  }();
  return names;
}

std::string unknown_metric(const std::string& name) {
  for (const std::string& known : metric_names())
    if (known == name) return "";
  std::string list;
  for (const std::string& known : metric_names()) list += (list.empty() ? "" : ", ") + known;
  return "unknown metric \"" + cut_text(name) + "\": a path under a result's \"metrics\", one of " + list +
         " (docs/results-format.md)";
}

MetricPath::MetricPath(const std::string& name) : name_(name) {
  if (const std::string why = unknown_metric(name); !why.empty()) throw UnknownMetric(why);
  for (std::size_t start = 0;;) {
    const std::size_t dot = name.find('.', start);
    keys_.push_back(name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
}

std::optional<double> MetricPath::of(const json& result) const {
  const json* metrics = walk(result, std::initializer_list<const char*>{"metrics"});
  const json* v = metrics == nullptr ? nullptr : walk(*metrics, keys_);
  if (v == nullptr || !v->is_number() || !std::isfinite(v->get<double>())) return std::nullopt;
  return v->get<double>();
}

const json* json_at_path(const json& j, std::initializer_list<std::string_view> path) { return walk(j, path); }

std::vector<double> iteration_samples(const json& result) {
  const json* s = json_at_path(result, {"metrics", "iteration_s", "samples"});
  return s != nullptr && s->is_array() ? s->get<std::vector<double>>() : std::vector<double>{};
}

}  // namespace ptdp
