// A metric over commits, from a folder of result files (one file per CI run):
// each configuration's values in file order, with the regression gate
// (compare_results, the one `ptdp compare` applies) run between each file and
// the one before it. `ptdp history` prints it and report/plot_history.py draws it.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gate/compare.h"

namespace ptdp {

inline constexpr const char* kHistorySchema = "ptdp.history/1";

// One result file of the folder.
struct HistoryFile {
  std::string file;    // its name in the folder
  std::string commit;  // software.commit ("?" when not recorded)
  std::vector<CompareEntry> entries;
};

// Every *.json file directly in `dir`, in file-name order: results record
// their commit but no time, so a CI job names each file so that names sort by
// time (docs/ci-gate.md). Throws std::runtime_error naming a folder that
// cannot be read or holds no such file.
std::vector<std::filesystem::path> history_files(const std::filesystem::path& dir);
// The files read (ptdp.result/2 or ptdp.sweep-results/1), in the order given;
// std::runtime_error naming a file that is not a ptdp result.
std::vector<HistoryFile> load_history_files(const std::vector<std::filesystem::path>& paths);
// Both: the results of `dir`.
std::vector<HistoryFile> load_history_folder(const std::filesystem::path& dir);

// One configuration in one file.
struct HistoryPoint {
  std::string file, commit;
  std::optional<double> value;      // the metric; absent when the result lacks it
  std::optional<double> delta_pct;  // the metric against the previous point, in percent
  std::optional<CompareRow> gate;   // against the previous file's point (absent for the first)
  bool flagged = false;             // the gate says it regressed
  std::string not_judged;           // why the gate could not judge this pair, when it could not
};

struct HistorySeries {
  std::string identity, label;
  ResultMode mode = ResultMode::projected;
  std::vector<HistoryPoint> points;  // in file order
};

struct History {
  std::string metric;  // a path under "metrics", dotted: "model_tflops_per_gpu", "bubble.measured"
  double threshold_pct = 5, alpha = kDefaultAlpha;
  std::vector<HistorySeries> series;  // one per configuration (and mode), in order of first appearance
  int flagged = 0;
};

// The series of `files` (grouped through a hash map: near-linear in the
// points), the gate applied between neighbours. Throws UnknownMetric
// (metric_path.h) for a `metric` no result reports, and
// std::invalid_argument when no file has `metric` as a number, or for a
// threshold or alpha compare_results refuses.
History build_history(const std::vector<HistoryFile>& files, const std::string& metric, double threshold_pct,
                      double alpha);

// {"schema": "ptdp.history/1", "metric", "threshold_pct", "alpha", "flagged",
//  "series": [{"label", "key", "mode", "points": [{"file", "commit", "value", "flagged", "delta_pct",
//  "p_value", "not_judged"}]}]}: what report/plot_history.py draws.
nlohmann::json to_json(const History& h);

}  // namespace ptdp
