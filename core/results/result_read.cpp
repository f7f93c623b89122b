// Reading a RunResult back from its JSON: every field checked, the first
// problem refused (JsonRefused) with its pointer ("/metrics/bubble/simulated").
#include <set>

#include "core/config/json_read.h"
#include "core/results/result.h"
#include "core/results/result_io.h"

namespace ptdp {

namespace {

using json = nlohmann::json;

template <typename T>
std::vector<T> array_or_null(const JsonAt& j, const char* key) {
  std::vector<T> out;
  if (const auto v = j.find(key))
    for (const auto& e : v->elements()) out.push_back(e.get<T>());
  return out;
}

MemoryBreakdown breakdown_of(const JsonAt& j) {
  j.object();
  MemoryBreakdown m;
  for (const auto& [key, field] : {std::pair{"params", &MemoryBreakdown::params}, {"grads", &MemoryBreakdown::grads},
                                   {"optimizer", &MemoryBreakdown::optimizer},
                                   {"activations", &MemoryBreakdown::activations}})
    m.*field = j.get<std::int64_t>(key, 0);
  return m;
}

BubbleFigures bubble_of(const JsonAt& m) {
  const JsonAt b = m.at("bubble").object();
  BubbleFigures out;
  out.measured = value_or_null<double>(b, "measured");
  out.simulated = value_or_null<double>(b, "simulated");
  out.idle_share = value_or_null<double>(b, "idle_share");
  out.analytical = b.get<double>("analytical", 0);
  const JsonAt stage = b.at("per_stage").object();
  out.measured_per_stage = array_or_null<double>(stage, "measured");
  out.simulated_per_stage = array_or_null<double>(stage, "simulated");
  out.measured_per_rank = array_or_null<double>(b.at("per_rank").object(), "measured");
  return out;
}

MemoryFigures memory_of(const JsonAt& m) {
  const JsonAt j = m.at("memory_bytes").object();
  MemoryFigures out;
  const JsonAt formula = j.at("formula");
  const std::string name = formula.get<std::string>();
  if (name == to_string(ActivationFormula::ptdp)) out.formula = ActivationFormula::ptdp;
  else if (name == to_string(ActivationFormula::korthikanti)) out.formula = ActivationFormula::korthikanti;
  else formula.refuse("must be ptdp or korthikanti (got " + json_excerpt(name) + ")");
  if (const auto peak = j.find("peak_measured")) out.peak_measured = peak->get<std::int64_t>();
  out.available = j.get<std::int64_t>("available", 0);
  out.fits = j.get<bool>("fits", true);
  const JsonAt stage = j.at("per_stage").object();
  for (const auto& e : stage.at("model").elements()) out.model_per_stage.push_back(breakdown_of(e));
  out.measured_per_stage = array_or_null<std::int64_t>(stage, "measured");
  for (const auto& [key, value] : j.at("per_rank").members()) {
    if (key == "measured") out.measured_per_rank = array_or_null<std::int64_t>(j.at("per_rank"), "measured");
    else out.device_per_rank[key] = array_or_null<std::int64_t>(j.at("per_rank"), key.c_str());
  }
  return out;
}

std::optional<Breakdown> time_breakdown_of(const JsonAt& m) {
  const auto b = m.find("breakdown_s");
  if (!b) return std::nullopt;
  Breakdown out;
  for (const auto& [key, field] : {std::pair{"compute", &Breakdown::compute}, {"tp_comm", &Breakdown::tp_comm},
                                   {"pp_comm", &Breakdown::pp_comm}, {"dp_comm", &Breakdown::dp_comm},
                                   {"optimizer", &Breakdown::optimizer}, {"bubble", &Breakdown::bubble}})
    out.*field = b->get<double>(key, 0);
  return out;
}

std::optional<CommunicationFigures> communication_of(const JsonAt& m) {
  const auto c = m.find("communication");
  if (!c) return std::nullopt;
  CommunicationFigures out;
  for (const auto& [key, field] :
       {std::pair{"tp_bytes", &CommunicationFigures::tp}, {"pp_bytes", &CommunicationFigures::pp},
        {"dp_bytes", &CommunicationFigures::dp}, {"embedding_bytes", &CommunicationFigures::embedding}})
    out.*field = c->get<double>(key, 0);
  return out;
}

// The figures under "metrics" (or "projected"/"metrics").
void read_metrics(const JsonAt& m, RunResult& r) {
  m.object();
  r.iteration_s = array_or_null<double>(m.at("iteration_s").object(), "samples");
  r.bubble = bubble_of(m);
  r.memory = memory_of(m);
  r.breakdown = time_breakdown_of(m);
  r.communication = communication_of(m);
  r.loss = array_or_null<double>(m, "loss");
  r.grad_norm = array_or_null<double>(m, "grad_norm");
  r.lr = array_or_null<double>(m, "lr");
  if (const auto c = m.find("checkpoint")) r.checkpoint = checkpoint_metrics_of(*c);
}

// "plan.tp" -> "/plan/tp": a config reader's field as a pointer into the result.
std::string pointer_of(const std::string& field) {
  std::string out = "/" + field;
  for (auto& c : out) c = c == '.' ? '/' : c;
  return out;
}

Config config_of(const JsonAt& j) {
  json model = j.at("model").object().value();
  model.erase("vocab_padded");
  const json sections = {{"model", model}, {"plan", j.at("plan").object().value()},
                         {"machine", j.at("machine").object().value()}, {"optimizer", j.at("optimizer").object().value()}};
  ConfigErrors errors;
  Config c;
  try {
    c = config_from_json(sections, default_machines_dir());
    errors = validate(c);
  } catch (const ConfigRefused& e) {
    errors = e.errors();
  }
  if (!errors.empty()) throw JsonRefused(j.source(), pointer_of(errors.front().field), errors.front().message);
  return c;
}

// "expected_error" and "sensitivity" of a projection (objects, or absent).
void read_trust(const JsonAt& j, RunResult& r) {
  for (const auto& [key, field] : {std::pair{"expected_error", &RunResult::expected_error},
                                   {"sensitivity", &RunResult::sensitivity}})
    if (const auto v = j.find(key)) r.*field = v->object().value();
}

// "projected": {"metrics", "projection", "expected_error", "sensitivity"}, or {"error"}.
void read_projected(const JsonAt& p, RunResult& r) {
  p.object();
  const auto metrics = p.find("metrics");
  if (!metrics) {
    r.projected_error = p.get<std::string>("error", "");
    return;
  }
  auto out = std::make_shared<RunResult>();
  out->config = r.config;
  if (const auto v = p.find("projection")) out->provenance = v->object().value();
  read_metrics(*metrics, *out);
  read_trust(p, *out);
  r.projected = std::move(out);
}

}  // namespace

RunResult read_result(const json& doc, const std::string& source) {
  const JsonAt j(doc, source);
  j.object();
  const auto schema = j.find("schema");
  if (!schema) j.refuse("has no \"schema\"");
  const std::string name = schema->get<std::string>();
  if (name == "ptdp.result/1")
    schema->refuse("\"ptdp.result/1\" is the old schema; rerun, or see docs/results-format.md (migration)");
  if (name != kResultSchema) schema->refuse("must be \"" + std::string(kResultSchema) + "\" (got " + json_excerpt(name) + ")");
  RunResult r;
  r.system = j.get<std::string>("system", "ptdp");
  r.mode = mode_at(j);
  r.config = config_of(j);
  r.vocab_padded = j.at("model").get<std::int64_t>("vocab_padded", 0);
  if (const auto v = j.find("software")) r.software = v->object().value();
  const char* provenance = r.mode == ResultMode::measured ? "run" : "projection";
  if (const auto v = j.find(provenance)) r.provenance = v->object().value();
  read_metrics(j.at("metrics"), r);
  read_trust(j, r);
  if (const auto p = j.find("projected")) read_projected(*p, r);
  if (const auto v = j.find("ranks")) r.ranks = ranks_of(*v);  // "stragglers" is drawn from them
  if (const auto v = j.find("hardware")) r.hardware = hardware_of(*v);
  const std::set<std::string> known = {"schema",    "system",   "mode",    "model",     "plan",
                                       "machine",   "optimizer", "software", "metrics", "projected", provenance,
                                       "expected_error", "sensitivity", "ranks", "stragglers", "hardware"};
  for (const auto& [key, value] : doc.items())
    if (!known.contains(key)) r.extra[key] = value;
  return r;
}

}  // namespace ptdp
