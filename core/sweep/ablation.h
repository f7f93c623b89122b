// The ablation of the projection against the paper (`ptdp validate --ablate`):
// every experiment checked with all mechanisms on, then once with each modelled
// mechanism (core/config/mechanisms.h) switched off, so each part of the model
// shows what it earns. The switch is set on every point's machine, that is on
// the cost model, never on one experiment.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sweep/paper_check.h"

namespace ptdp {

struct ExperimentSummary {
  std::string name;
  int points = 0;
  double mean_abs_error = 0, max_abs_error = 0;
  int ordering_violations = 0, does_not_fit = 0;
};

struct AblationRow {
  std::string mechanism;  // "" for the full model
  std::vector<ExperimentSummary> experiments;  // in the order of the sweeps given, those with published values
};

struct Ablation {
  AblationRow full;
  std::vector<AblationRow> off;  // one per mechanism, in mechanism_switches() order
  double seconds = 0;
};

ExperimentSummary summarize(const ExperimentCheck& c);
// `sweeps`: paper sweeps with published values (loaded once, points copied per row).
Ablation ablate(const std::vector<Sweep>& sweeps, const Calibration* calibration);
nlohmann::json to_json(const Ablation& a);
void print_ablation(const Ablation& a);

}  // namespace ptdp
