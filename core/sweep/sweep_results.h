// The results file of a sweep ("ptdp.sweep-results/1", docs/results-format.md):
// one record per finished point, keyed so that a rerun recognises what is
// done, with the point's value against the paper and against acceptance bands.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/process/outcome.h"
#include "core/results/acceptance.h"
#include "core/results/result_mode.h"
#include "core/sweep/sweep.h"

namespace ptdp {

inline constexpr const char* kSweepResultsSchema = "ptdp.sweep-results/1";

// What a point's run produced, before it becomes a record.
struct PointRun {
  ResultMode mode = ResultMode::projected;
  Outcome status = Outcome::failed;
  std::string reason;
  double seconds = 0;
  nlohmann::json result;  // a ptdp.result/1 object, or null
};

// Unique per (sweep, point, mode): name#index:mode:overrides.
std::string point_key(const Sweep& sweep, const SweepPoint& point, ResultMode mode);

// The run against the point's expect bands (none without bands); their metric names
// are MetricPath's (UnknownMetric for another, refused when the sweep is read).
Acceptance acceptance(const nlohmann::json& expect, const PointRun& run);

// One record of the results file.
nlohmann::json point_record(const Sweep& sweep, const SweepPoint& point, const PointRun& run);

class SweepResults {
 public:
  // Reads `file` when it exists (a rerun resumes it); throws JsonRefused (a
  // std::runtime_error) when it belongs to another sweep, is not a results
  // file, or a record lacks its string "key".
  SweepResults(const std::filesystem::path& file, const Sweep& sweep);

  bool finished(const std::string& key) const;
  // Adds a record and rewrites the file atomically.
  void add(const nlohmann::json& record);
  // The record of `key`, or null when there is none.
  const nlohmann::json* record(const std::string& key) const;
  // Each record replaces the one of its key (or is added); the file is
  // rewritten once, atomically, and only when a record changed, so merging
  // the same records again leaves it as it was. Whether it was rewritten.
  bool put(const std::vector<nlohmann::json>& records);
  const nlohmann::json& points() const { return doc_["points"]; }

 private:
  std::filesystem::path file_;
  nlohmann::json doc_;
  std::unordered_map<std::string, std::size_t> at_;  // key -> its record's index in doc_["points"] (the first)
};

}  // namespace ptdp
