// Reading a RunResult back from its JSON: every field checked, every problem
// named by its path ("metrics.bubble.simulated: not a number").
#include <set>
#include <stdexcept>

#include "core/metrics/result.h"
#include "core/metrics/result_io.h"

namespace ptdp {

namespace {

using json = nlohmann::json;

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw std::runtime_error(path + ": " + why);
}

const json& object_at(const json& j, const char* key, const std::string& path) {
  if (!j.contains(key) || !j[key].is_object()) refuse(path + key, "missing or not an object");
  return j[key];
}

std::optional<double> number_or_null(const json& j, const char* key, const std::string& path) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_number()) refuse(path + key, "not a number");
  return j[key].get<double>();
}

template <typename T>
std::vector<T> array_or_null(const json& j, const char* key, const std::string& path) {
  if (!j.contains(key) || j[key].is_null()) return {};
  if (!j[key].is_array()) refuse(path + key, "not an array");
  std::vector<T> out;
  for (const auto& v : j[key]) {
    if (!v.is_number()) refuse(path + key, "holds a value that is not a number");
    out.push_back(v.get<T>());
  }
  return out;
}

MemoryBreakdown breakdown_of(const json& j, const std::string& path) {
  if (!j.is_object()) refuse(path, "not an object");
  MemoryBreakdown m;
  for (const auto& [key, field] : {std::pair{"params", &MemoryBreakdown::params}, {"grads", &MemoryBreakdown::grads},
                                   {"optimizer", &MemoryBreakdown::optimizer},
                                   {"activations", &MemoryBreakdown::activations}})
    m.*field = static_cast<std::int64_t>(number_or_null(j, key, path + ".").value_or(0));
  return m;
}

BubbleFigures bubble_of(const json& m, const std::string& path) {
  const json& b = object_at(m, "bubble", path);
  const std::string at = path + "bubble.";
  BubbleFigures out;
  out.measured = number_or_null(b, "measured", at);
  out.simulated = number_or_null(b, "simulated", at);
  out.idle_share = number_or_null(b, "idle_share", at);
  out.analytical = number_or_null(b, "analytical", at).value_or(0);
  const json& stage = object_at(b, "per_stage", at);
  out.measured_per_stage = array_or_null<double>(stage, "measured", at + "per_stage.");
  out.simulated_per_stage = array_or_null<double>(stage, "simulated", at + "per_stage.");
  out.measured_per_rank = array_or_null<double>(object_at(b, "per_rank", at), "measured", at + "per_rank.");
  return out;
}

MemoryFigures memory_of(const json& m, const std::string& path) {
  const json& j = object_at(m, "memory_bytes", path);
  const std::string at = path + "memory_bytes.";
  MemoryFigures out;
  const std::string formula = j.value("formula", "");
  if (formula == to_string(ActivationFormula::ptdp)) out.formula = ActivationFormula::ptdp;
  else if (formula == to_string(ActivationFormula::korthikanti)) out.formula = ActivationFormula::korthikanti;
  else refuse(at + "formula", "not ptdp or korthikanti");
  if (const auto peak = number_or_null(j, "peak_measured", at)) out.peak_measured = static_cast<std::int64_t>(*peak);
  out.available = static_cast<std::int64_t>(number_or_null(j, "available", at).value_or(0));
  out.fits = j.value("fits", true);
  const json& stage = object_at(j, "per_stage", at);
  if (!stage.contains("model") || !stage["model"].is_array()) refuse(at + "per_stage.model", "missing or not an array");
  for (std::size_t i = 0; i < stage["model"].size(); ++i)
    out.model_per_stage.push_back(breakdown_of(stage["model"][i], at + "per_stage.model[" + std::to_string(i) + "]"));
  out.measured_per_stage = array_or_null<std::int64_t>(stage, "measured", at + "per_stage.");
  const json& rank = object_at(j, "per_rank", at);
  for (const auto& [key, value] : rank.items()) {
    if (key == "measured") out.measured_per_rank = array_or_null<std::int64_t>(rank, "measured", at + "per_rank.");
    else out.device_per_rank[key] = array_or_null<std::int64_t>(rank, key.c_str(), at + "per_rank.");
  }
  return out;
}

std::optional<Breakdown> time_breakdown_of(const json& m, const std::string& path) {
  if (!m.contains("breakdown_s") || m["breakdown_s"].is_null()) return std::nullopt;
  const json& b = object_at(m, "breakdown_s", path);
  const std::string at = path + "breakdown_s.";
  Breakdown out;
  for (const auto& [key, field] : {std::pair{"compute", &Breakdown::compute}, {"tp_comm", &Breakdown::tp_comm},
                                   {"pp_comm", &Breakdown::pp_comm}, {"dp_comm", &Breakdown::dp_comm},
                                   {"optimizer", &Breakdown::optimizer}, {"bubble", &Breakdown::bubble}})
    out.*field = number_or_null(b, key, at).value_or(0);
  return out;
}

std::optional<CommunicationFigures> communication_of(const json& m, const std::string& path) {
  if (!m.contains("communication") || m["communication"].is_null()) return std::nullopt;
  const json& c = object_at(m, "communication", path);
  const std::string at = path + "communication.";
  CommunicationFigures out;
  for (const auto& [key, field] :
       {std::pair{"tp_bytes", &CommunicationFigures::tp}, {"pp_bytes", &CommunicationFigures::pp},
        {"dp_bytes", &CommunicationFigures::dp}, {"embedding_bytes", &CommunicationFigures::embedding}})
    out.*field = number_or_null(c, key, at).value_or(0);
  return out;
}

// The figures under "metrics" (path "metrics." or "projected.metrics.").
void read_metrics(const json& m, const std::string& path, RunResult& r) {
  r.iteration_s = array_or_null<double>(object_at(m, "iteration_s", path), "samples", path + "iteration_s.");
  r.bubble = bubble_of(m, path);
  r.memory = memory_of(m, path);
  r.breakdown = time_breakdown_of(m, path);
  r.communication = communication_of(m, path);
  r.loss = array_or_null<double>(m, "loss", path);
  r.grad_norm = array_or_null<double>(m, "grad_norm", path);
}

Config config_of(const json& j) {
  json model = object_at(j, "model", "");
  model.erase("vocab_padded");
  const json sections = {{"model", model}, {"plan", object_at(j, "plan", "")}, {"machine", object_at(j, "machine", "")},
                         {"optimizer", object_at(j, "optimizer", "")}};
  try {
    return config_from_json(sections, default_machines_dir());
  } catch (const ConfigRefused& e) {
    refuse(e.errors().front().field, e.errors().front().message);
  }
}

// "expected_error" and "sensitivity" of a projection (objects, or absent).
void read_trust(const json& j, const std::string& path, RunResult& r) {
  for (const auto& [key, field] : {std::pair{"expected_error", &RunResult::expected_error},
                                   {"sensitivity", &RunResult::sensitivity}})
    if (j.contains(key)) r.*field = object_at(j, key, path);
}

}  // namespace

RunResult read_result(const json& j) {
  if (!j.is_object()) refuse("result", "not a JSON object");
  const json schema = j.value("schema", json());
  if (schema == "ptdp.result/1")
    refuse("schema", "\"ptdp.result/1\" is the old schema; rerun, or see docs/results-format.md (migration)");
  if (schema != kResultSchema) refuse("schema", "not \"" + std::string(kResultSchema) + "\" (got " + schema.dump() + ")");
  RunResult r;
  r.system = j.value("system", "ptdp");
  const auto mode = parse_result_mode(j.value("mode", ""));
  if (!mode) refuse("mode", "not one of measured, projected, slice");
  r.mode = *mode;
  r.config = config_of(j);
  r.vocab_padded = j["model"].value("vocab_padded", std::int64_t{0});
  r.software = j.value("software", json::object());
  const char* provenance = r.mode == ResultMode::measured ? "run" : "projection";
  r.provenance = j.value(provenance, json::object());
  read_metrics(object_at(j, "metrics", ""), "metrics.", r);
  read_trust(j, "", r);
  if (j.contains("projected") && j["projected"].contains("metrics")) {
    auto p = std::make_shared<RunResult>();
    p->config = r.config;
    p->provenance = j["projected"].value("projection", json::object());
    read_metrics(j["projected"]["metrics"], "projected.metrics.", *p);
    read_trust(j["projected"], "projected.", *p);
    r.projected = std::move(p);
  } else if (j.contains("projected")) {
    r.projected_error = j["projected"].value("error", "");
  }
  const std::set<std::string> known = {"schema",    "system",   "mode",    "model",     "plan",
                                       "machine",   "optimizer", "software", "metrics", "projected", provenance,
                                       "expected_error", "sensitivity"};
  for (const auto& [key, value] : j.items())
    if (!known.contains(key)) r.extra[key] = value;
  return r;
}

}  // namespace ptdp
