// The modern validation set: sweeps/modern/*.json against report/reference/modern-runs.json.
#include "core/sweep/modern_check.h"

#include <algorithm>
#include <cmath>

#include "core/config/data_root.h"
#include "core/config/json_read.h"

namespace ptdp {

namespace {

nlohmann::json read_reference() { return read_json_file(modern_reference_file()); }

// The source block of the experiment a check reproduces (by the sweep's reference id).
nlohmann::json source_of(const nlohmann::json& experiments, const std::string& reference) {
  if (!experiments.contains(reference)) return nullptr;
  const nlohmann::json& e = experiments.at(reference);
  nlohmann::json out = e.value("source", nlohmann::json::object());
  for (const char* key : {"metric", "flop_convention", "stated", "unstated"})
    if (e.contains(key)) out[key] = e.at(key);
  return out;
}

}  // namespace

std::filesystem::path modern_reference_file() { return data_root() / "report" / "reference" / "modern-runs.json"; }

std::vector<std::filesystem::path> modern_sweep_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(data_root() / "sweeps" / "modern"))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<ExperimentCheck> check_modern_set(const Calibration* calibration) {
  const nlohmann::json reference = load_reference_experiments(modern_reference_file());
  std::vector<ExperimentCheck> checks;
  for (const auto& file : modern_sweep_files())
    checks.push_back(
        check_against_paper(load_sweep(file, default_machines_dir(), &reference), calibration, UnfitPoints::compare));
  return checks;
}

SetSummary summarize_set(const std::vector<ExperimentCheck>& checks) {
  SetSummary s;
  double sum = 0;
  for (const ExperimentCheck& c : checks) {
    s.sources += c.points.empty() ? 0 : 1;
    for (const PointCheck& p : c.points) {
      sum += std::abs(p.error);
      s.max_abs_error = std::max(s.max_abs_error, std::abs(p.error));
      ++s.points;
    }
  }
  s.mean_abs_error = s.points ? sum / static_cast<double>(s.points) : 0;
  return s;
}

nlohmann::json modern_set_json(const std::vector<ExperimentCheck>& checks) {
  const nlohmann::json doc = read_reference();
  const nlohmann::json& experiments = doc.at("experiments");
  nlohmann::json sources = nlohmann::json::array();
  for (const ExperimentCheck& c : checks) {
    nlohmann::json j = to_json(c);
    j["reference"] = c.reference;
    j["source"] = source_of(experiments, c.reference);
    sources.push_back(std::move(j));
  }
  const SetSummary s = summarize_set(checks);
  return {{"set", "modern"},
          {"reference", "report/reference/modern-runs.json"},
          {"rules", doc.value("rules", nlohmann::json::object())},
          {"not_projectable", doc.value("not_projectable", nlohmann::json::array())},
          {"h200", doc.value("h200", "")},
          {"experiments", sources},
          {"overall", {{"sources", s.sources}, {"points", s.points}, {"mean_abs_error", s.mean_abs_error},
                       {"max_abs_error", s.max_abs_error}}}};
}

}  // namespace ptdp
