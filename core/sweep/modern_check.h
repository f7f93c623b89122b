// The modern validation set (issue 19): published training runs from sources
// other than the SC21 paper (technical reports, framework documentation,
// benchmark recipes), one sweep per source under sweeps/modern/, their published
// values, settings and sources in report/reference/modern-runs.json. Each source
// is checked as one experiment (paper_check.h: error per run, mean and max over
// the source); the set adds the figures over all its runs.
#pragma once
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sweep/paper_check.h"

namespace ptdp {

// report/reference/modern-runs.json: its "experiments" are the sources.
std::filesystem::path modern_reference_file();
// sweeps/modern/*.json, sorted.
std::vector<std::filesystem::path> modern_sweep_files();

// Every source of the set, checked (bare projections, as check_against_paper).
std::vector<ExperimentCheck> check_modern_set(const Calibration* calibration);

// Over every compared run of every source.
struct SetSummary {
  std::size_t sources = 0, points = 0;
  double mean_abs_error = 0, max_abs_error = 0;
};
SetSummary summarize_set(const std::vector<ExperimentCheck>& checks);

// The set's JSON ("ptdp.validation/1" with "set": "modern"): each source's check
// with its source description from the reference, the reference's rules for
// unstated choices and its list of runs left out, and the overall figures.
nlohmann::json modern_set_json(const std::vector<ExperimentCheck>& checks);

}  // namespace ptdp
