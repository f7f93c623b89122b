// Comparing two result files (a run or a sweep each): entries matched by
// configuration, relative deltas of throughput, iteration time, memory and
// bubble, and the regression rule `ptdp compare` gates CI on: a median beyond
// the threshold that the noise test (significance.h) on the iteration-time
// samples says is not noise.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gate/significance.h"
#include "core/process/outcome.h"
#include "core/results/result.h"

namespace ptdp {

// /2: "regressed" also needs the noise test; rows carry "beyond_threshold" and "noise".
inline constexpr const char* kCompareSchema = "ptdp.compare/2";
inline constexpr double kDefaultAlpha = 0.05;

// One result taken from a file: a whole ptdp.result/2, or one sweep point's.
struct CompareEntry {
  std::string identity;    // the configuration, without the mode: what BASE and NEW are matched on
  // Where the entry sits, JSON types aside: a sweep point's identity with its
  // overrides' values as text (8, 8.0 and "8" alike), "result" for a single
  // result. An unmatched pair in one slot was re-typed or changed its layout.
  std::string slot;
  std::string pointer;     // its JSON pointer in the file: "/points/3"; "" for a single result
  ResultMode mode = ResultMode::projected;
  std::string label;       // for people: "figure13:(2,32) batch 32" or "t8 p12 d4 b1 v2 interleaved"
  std::string tag;         // a sweep point's label and series as written: NEW may not change them (re-tagged)
  nlohmann::json result;   // the ptdp.result/2 object; null for a sweep point that has none
  Outcome status = Outcome::ok;  // a sweep point's status (ok, does_not_fit, failed, timeout, ...)
  std::string reason;         // a sweep point's reason, when it has one
};

// The entries of a parsed file, sweep points without a result included (they
// make the comparison unusable); `file` names it in errors. Throws
// std::runtime_error ("FILE: not a ptdp result: schema \"x\"") for anything
// but a ptdp.result/2 or ptdp.sweep-results/1 document, and JsonRefused
// ("FILE: /points/3/label: must be a string (got 3)") for a field of the wrong
// type or a point status that names no outcome (outcome.h), a point whose configuration and mode an earlier point has
// ("/points/7: repeats /points/2"), and a result filed under another mode than
// its own (mode_contradiction: a projection offered as measured).
std::vector<CompareEntry> compare_entries(const nlohmann::json& doc, const std::string& file);
// Reads and parses `file` first (read_json_file: "FILE: not valid JSON: ...").
std::vector<CompareEntry> load_compare_entries(const std::filesystem::path& file);
// What BASE and NEW entries are matched on (and what a side may not repeat): identity and mode.
std::string match_key(const CompareEntry& e);

// One figure of a matched pair; delta_pct = 100·(now − base)/base, absent
// when either side is absent, null or not a number, or base is 0.
struct MetricDelta {
  std::optional<double> base, now, delta_pct;
};

// The noise test of a matched pair on its iteration-time samples
// (metrics.iteration_s.samples; TFLOP/s is derived from them): NEW slower by
// a one-sided Mann–Whitney test, and NEW's median beyond BASE's upper fence.
struct NoiseCheck {
  int base_samples = 0, new_samples = 0;
  std::optional<Spread> base_spread;  // BASE's measured spread (absent without samples)
  std::optional<double> p_value;      // one-sided Mann–Whitney; absent when not tested
  bool exact = false;                 // p from the exact distribution
  bool beyond_spread = false;         // NEW's median above base_spread->upper_fence (when tested)
  // Why there is no p-value, so the gate fell back to the threshold alone:
  // "a projection: ...", "too few samples for the noise test ...".
  std::string not_tested;
};

struct CompareRow {
  std::string identity, label;
  ResultMode mode = ResultMode::projected;
  MetricDelta tflops;       // metrics.model_tflops_per_gpu
  MetricDelta iteration_s;  // metrics.iteration_s.median
  MetricDelta memory;       // metrics.memory_bytes.peak_measured, else .model.total
  MetricDelta bubble;       // metrics.bubble.measured, else .simulated
  NoiseCheck noise;
  bool beyond_threshold = false;  // regresses(): the medians alone
  // Beyond the threshold and not noise: p <= alpha and beyond BASE's spread,
  // or no test possible.
  bool regressed = false;
  std::string note;         // why it regressed beyond the figures: "no longer fits in memory"
};

// The same configuration on both sides, one measured and one projected (say):
// never compared, and a refusal of the comparison.
struct ModeMismatch {
  std::string identity, label;
  ResultMode base_mode = ResultMode::projected, new_mode = ResultMode::projected;
};

struct Comparison {
  double threshold_pct = 5;
  double alpha = kDefaultAlpha;             // the noise test's significance level
  std::vector<CompareRow> rows;             // matched pairs, in BASE's order
  std::vector<ModeMismatch> mode_differs;   // same configuration, different modes
  std::vector<std::string> only_in_base;    // labels of unmatched entries: BASE's were dropped in NEW
  std::vector<std::string> only_in_new;
  // What the gate cannot judge, one line each ("LABEL (MODE): why"): a point
  // without a result (failed, timeout, oom, refused) on either side, matched
  // or not; a matched pair whose figures are implausible (plausibility.h:
  // missing, not finite, denormal, beyond bounds, a median that is not its
  // samples', faster than the peak) or whose layouts differ, or that NEW
  // labels otherwise (re-tagged); and an unmatched pair in one slot (re-typed
  // overrides, or single results of two configurations).
  std::vector<std::string> unusable;
  int regressions = 0;                      // rows with regressed set
};

// True when TFLOP/s fell by more than `threshold_pct` percent or iteration
// time grew by more than that (1e-9 % slack for rounding). Memory and bubble
// are reported, never gated.
bool regresses(const CompareRow& row, double threshold_pct);

// Matches entries with the same identity and mode through a hash map (a side
// must not repeat one: std::runtime_error naming it); left-over entries whose
// identity matches but mode does not become mode mismatches, left-over pairs in
// one slot unusable; the rest are only on one side. A pair regresses when
// it is beyond the threshold and its iteration times say it is not noise: NEW
// slower at significance `alpha`, and NEW's median above BASE's upper fence
// (the test alone flags a rerun whose whole run was slowed by the machine:
// docs/ci-gate.md). Where the samples are too few for the test to reach alpha
// (a projection's one value, or fewer than 3 a side at 0.05) the threshold
// alone decides and the row says so. A pair that fitted in memory in BASE but
// not in NEW regresses. Throws std::invalid_argument for a threshold that is
// not a finite number >= 0 or an alpha outside (0, 1).
Comparison compare_results(const std::vector<CompareEntry>& base, const std::vector<CompareEntry>& now,
                           double threshold_pct, double alpha = kDefaultAlpha);

// {"schema": "ptdp.compare/2", "threshold_pct", "alpha", "matched", "regressions",
//  "rows": [...], "mode_differs": [...], "only_in_base": [...], "only_in_new": [...], "unusable": [...]}.
nlohmann::json to_json(const Comparison& c);

}  // namespace ptdp
