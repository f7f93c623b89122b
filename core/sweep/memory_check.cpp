// The memory validation set: sweeps/memory/*.json against report/reference/memory-runs.json.
#include "core/sweep/memory_check.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/config/data_root.h"
#include "core/config/json_read.h"
#include "core/config/rank_dims.h"
#include "core/schedule/registry.h"
#include "core/sweep/sweep.h"

namespace ptdp {

namespace {

constexpr MemoryScope kScopes[] = {MemoryScope::model_state_per_parameter, MemoryScope::model_state,
                                   MemoryScope::activations, MemoryScope::total};

MemoryRun read_run(const std::string& source, const std::string& id, const JsonAt& j) {
  MemoryRun r;
  r.source = source, r.id = id;
  r.value = j.at("value").get<double>();
  if (!(r.value > 0)) j.at("value").refuse("must be a positive number (no relative error against 0)");
  const JsonAt scope = j.at("scope");
  const auto s = memory_scope_from_string(scope.get<std::string>());
  if (!s) scope.refuse("must be model_state_per_parameter, model_state, activations or total");
  r.scope = *s;
  r.where = j.at("where").get<std::string>();
  r.published = j.get<std::string>("published", "");
  r.mechanism = j.get<std::string>("mechanism", "");
  r.pending = j.get<std::string>("pending", "");
  return r;
}

// The reference's run for a sweep point, by the sweep's reference id and the point's tag.run.
const MemoryRun& run_of(const std::map<std::string, MemoryRun>& runs, const Sweep& sweep, const SweepPoint& p) {
  const std::string id = p.tags.contains("run") && p.tags["run"].is_string() ? p.tags["run"].get<std::string>() : "";
  const auto it = runs.find(sweep.reference + "/" + id);
  if (it == runs.end())
    throw std::runtime_error(sweep.file.string() + ": point " + std::to_string(p.index) + ": tag.run \"" + id +
                             "\" is no run of \"" + sweep.reference + "\" in " + memory_reference_file().string());
  return it->second;
}

MemorySourceCheck check_source(const Sweep& sweep, const std::map<std::string, MemoryRun>& runs) {
  MemorySourceCheck c{sweep.name, sweep.reference, sweep.reproduces, {}, {}};
  for (const SweepPoint& p : sweep.points) {
    const MemoryRun& run = run_of(runs, sweep, p);
    if (!p.errors.empty()) {
      c.refused.push_back(p.label + ": " + p.errors.front().field + ": " + p.errors.front().message);
      continue;
    }
    MemoryPointCheck m{run, modelled_memory(p.config, run.scope), 0, p.config_json.value("plan", nlohmann::json())};
    m.error = (m.modelled - run.value) / run.value;
    c.points.push_back(std::move(m));
  }
  return c;
}

nlohmann::json errors_json(const MemoryErrors& e) {
  return {{"points", e.points}, {"mean_abs_error", e.mean_abs_error}, {"max_abs_error", e.max_abs_error}};
}

nlohmann::json point_json(const MemoryPointCheck& p) {
  nlohmann::json j = {{"run", p.run.id},         {"scope", to_string(p.run.scope)}, {"published", p.run.value},
                      {"published_as", p.run.published}, {"modelled", p.modelled}, {"error", p.error},
                      {"where", p.run.where},    {"plan", p.plan}};
  if (!p.run.mechanism.empty()) j["mechanism"] = p.run.mechanism;
  if (!p.run.pending.empty()) j["pending"] = p.run.pending;
  return j;
}

}  // namespace

std::string to_string(MemoryScope s) {
  switch (s) {
    case MemoryScope::model_state_per_parameter: return "model_state_per_parameter";
    case MemoryScope::model_state: return "model_state";
    case MemoryScope::activations: return "activations";
    case MemoryScope::total: return "total";
  }
  return "?";
}

std::optional<MemoryScope> memory_scope_from_string(const std::string& text) {
  for (const MemoryScope s : kScopes)
    if (to_string(s) == text) return s;
  return std::nullopt;
}

std::map<std::string, MemoryRun> read_memory_reference(const std::filesystem::path& file) {
  const nlohmann::json doc = read_json_file(file);
  std::map<std::string, MemoryRun> runs;
  for (const auto& [source, experiment] : JsonAt(doc, file.string()).at("experiments").members()) {
    experiment.at("source").at("title").get<std::string>();  // every source names itself
    for (const auto& [id, run] : experiment.at("runs").members()) runs[source + "/" + id] = read_run(source, id, run);
  }
  return runs;
}

std::filesystem::path memory_reference_file() { return data_root() / "report" / "reference" / "memory-runs.json"; }

std::vector<std::filesystem::path> memory_sweep_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(data_root() / "sweeps" / "memory"))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// A model-state figure (ZeRO's Ψ-multiples, Megatron's bytes per parameter)
// counts the partitioned state only: the transient units of ZeRO-2/3 (the
// gathered weights in use and prefetched, a gradient on its way out) are left
// out on both sides, as the sources leave them out.
double modelled_memory(MemoryScope scope, const MemoryBreakdown& stage, const StateBytes& partitioned,
                       std::int64_t stage_parameters) {
  const double state = static_cast<double>(partitioned.params + partitioned.grads + partitioned.optimizer);
  switch (scope) {
    case MemoryScope::model_state_per_parameter: return state / static_cast<double>(stage_parameters);
    case MemoryScope::model_state: return state;
    case MemoryScope::activations: return static_cast<double>(stage.activations);
    case MemoryScope::total: return static_cast<double>(stage.total());
  }
  return 0;
}

double modelled_memory(const Config& cfg, MemoryScope scope) {
  const Plan& p = cfg.plan;
  const RankDims dims(cfg.model, p);
  const MemoryTraits traits = memory_traits(cfg.machine, p);
  const auto programs = build_pipeline(p.schedule, p.pp, p.micro_batches(), p.virtual_stages);
  const std::vector<MemoryBreakdown> stages =
      memory_per_stage(cfg.model, p, dims, traits, ActivationFormula::korthikanti, programs);
  const auto most = std::max_element(stages.begin(), stages.end(),
                                     [](const auto& a, const auto& b) { return a.total() < b.total(); });
  const std::int64_t params = rank_parameter_count(cfg.model, p, dims, static_cast<int>(most - stages.begin()));
  return modelled_memory(scope, *most, state_bytes(p, traits, params, /*unit=*/0), params);
}

MemoryErrors memory_errors(const std::vector<MemorySourceCheck>& checks, bool pending_too) {
  MemoryErrors e;
  double sum = 0;
  for (const MemorySourceCheck& c : checks)
    for (const MemoryPointCheck& p : c.points) {
      if (!pending_too && !p.run.pending.empty()) continue;
      sum += std::abs(p.error);
      e.max_abs_error = std::max(e.max_abs_error, std::abs(p.error));
      ++e.points;
    }
  e.mean_abs_error = e.points ? sum / static_cast<double>(e.points) : 0;
  return e;
}

std::vector<MemorySourceCheck> check_memory_set() {
  const std::filesystem::path file = memory_reference_file();
  const std::map<std::string, MemoryRun> runs = read_memory_reference(file);
  const nlohmann::json experiments = load_reference_experiments(file);
  std::vector<MemorySourceCheck> checks;
  for (const auto& sweep_file : memory_sweep_files())
    checks.push_back(check_source(load_sweep(sweep_file, default_machines_dir(), &experiments), runs));
  return checks;
}

nlohmann::json memory_set_json(const std::vector<MemorySourceCheck>& checks) {
  const nlohmann::json doc = read_json_file(memory_reference_file());
  nlohmann::json sources = nlohmann::json::array();
  for (const MemorySourceCheck& c : checks) {
    nlohmann::json points = nlohmann::json::array();
    for (const MemoryPointCheck& p : c.points) points.push_back(point_json(p));
    const MemoryErrors e = memory_errors({c}, true);
    sources.push_back({{"name", c.name}, {"reference", c.reference}, {"reproduces", c.reproduces},
                       {"source", doc["experiments"][c.reference].value("source", nlohmann::json::object())},
                       {"points", points}, {"refused", c.refused}, {"mean_abs_error", e.mean_abs_error},
                       {"max_abs_error", e.max_abs_error}});
  }
  return {{"set", "memory"},
          {"reference", "report/reference/memory-runs.json"},
          {"scopes", doc.value("scopes", nlohmann::json::object())},
          {"not_comparable", doc.value("not_comparable", nlohmann::json::array())},
          {"experiments", sources},
          {"overall", errors_json(memory_errors(checks, true))},
          {"overall_without_pending", errors_json(memory_errors(checks, false))}};
}

}  // namespace ptdp
