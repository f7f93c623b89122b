// Per-rank truth of a measured run: where each world rank ran, its own
// iteration times, its compute and communication-wait seconds, and the
// straggler summary drawn from them. The result's "ranks" and "stragglers"
// blocks (docs/results-format.md); each rank's memory peak and bubble stay in
// metrics.memory_bytes.per_rank and metrics.bubble.per_rank (one definition each).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/json_read.h"

namespace ptdp {

struct RankFigures {
  std::string host;                 // the host it ran on
  int local_rank = 0;               // its rank among that host's ranks
  int node = 0;                     // the host's index (order of first appearance)
  std::vector<double> iteration_s;  // its own wall time of each timed iteration (the run's is the max over ranks)
  double compute_s = 0;             // per timed iteration, mean (timeline.h's time_split)
  double comm_wait_s = 0;           // likewise
};

// The slowest rank and node by compute seconds against the median over ranks.
// Compute, not iteration time: every iteration ends in collectives that hold
// every rank to the slowest, so iteration times are nearly equal across ranks
// and a slow rank shows up as the others' communication wait instead.
struct StragglerSummary {
  double median_compute_s = 0;  // median over ranks
  int rank = 0;                 // the rank with the most compute
  double rank_compute_s = 0;
  double rank_percent = 0;      // 100 * (rank_compute_s / median - 1)
  std::string node_host;        // the host whose ranks compute longest on average
  int node = 0;
  double node_compute_s = 0;    // mean over that host's ranks
  double node_percent = 0;      // against the same median
};

// None for no ranks or a zero median.
std::optional<StragglerSummary> straggler_summary(const std::vector<RankFigures>& ranks);
// One or two lines for the end of `ptdp train` (the node line only with several hosts).
std::vector<std::string> describe(const StragglerSummary& s, int hosts);

nlohmann::json to_json(const std::vector<RankFigures>& ranks);
std::vector<RankFigures> ranks_of(const JsonAt& j);  // JsonRefused naming the pointer
nlohmann::json to_json(const StragglerSummary& s);

}  // namespace ptdp
