// One run's result ("ptdp.result/2"), the same type for a measured run
// (`ptdp train`), a projection (`ptdp project`, sweeps) and a slice (`ptdp
// slice`): one set of keys, figures a mode cannot know are null. Measured runs
// also carry their own replay through the simulator (bubble.simulated) and the
// projection of the same configuration ("projected"), so one file shows
// measured, replayed and projected side by side.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/accounting/memory_model.h"
#include "core/accounting/throughput.h"
#include "core/config/config.h"
#include "core/config/hardware.h"
#include "core/results/checkpoint_metrics.h"
#include "core/results/rank_figures.h"
#include "core/results/result_mode.h"

namespace ptdp {

// Seconds of one iteration on a rank, by what it was doing (averaged over the
// pipeline's ranks); projections and slices.
struct Breakdown {
  double compute = 0;    // forward and backward kernels (recompute included)
  double tp_comm = 0;    // tensor-parallel collectives inside them
  double pp_comm = 0;    // pipeline sends and the tied-embedding reduction
  double dp_comm = 0;    // data-parallel gradient reduction
  double optimizer = 0;  // optimizer step
  double bubble = 0;     // idle: waiting for other stages
};

// Pipeline bubble: idle / busy within the pipeline phase. Means are over stages.
struct BubbleFigures {
  std::optional<double> measured;    // the run's own timeline
  std::optional<double> simulated;   // the simulator: modelled costs, or a measured run's costs replayed
  std::optional<double> idle_share;  // measured idle / phase
  double analytical = 0;             // (p−1)/(v·m)
  std::vector<double> measured_per_stage, simulated_per_stage;  // p entries (or empty)
  std::vector<double> measured_per_rank;                        // world ranks (measured only)
};

// Memory of every pipeline stage: the model (memory_model.h) beside what the
// allocator measured.
struct MemoryFigures {
  ActivationFormula formula = ActivationFormula::korthikanti;  // the model's activation bytes
  std::vector<MemoryBreakdown> model_per_stage;      // p entries
  std::optional<std::int64_t> peak_measured;         // largest over ranks
  std::vector<std::int64_t> measured_per_stage;      // largest over each stage's ranks
  std::vector<std::int64_t> measured_per_rank;       // world ranks
  std::map<std::string, std::vector<std::int64_t>> device_per_rank;  // GPU: pool_reserved_peak, ...
  std::int64_t available = 0;                        // per device, 0 when not checked
  bool fits = true;
  std::int64_t peak_model() const;
};

// Payload bytes per iteration summed over ranks, by process group (measured).
struct CommunicationFigures {
  double tp = 0, pp = 0, dp = 0, embedding = 0;
};

struct RunResult {
  ResultMode mode = ResultMode::projected;
  std::string system = "ptdp";
  Config config;
  std::int64_t vocab_padded = 0;   // rows of the embedding and logits (0: not recorded)
  nlohmann::json software;         // commit, compiler, libraries
  nlohmann::json provenance;       // measured: "run"; projected and slice: "projection"
  std::vector<double> iteration_s; // samples (one for a projection)
  BubbleFigures bubble;
  MemoryFigures memory;
  std::optional<Breakdown> breakdown;
  std::optional<CommunicationFigures> communication;
  // Every iteration's loss, gradient norm and the learning rate it stepped
  // with (measured runs; empty, written null, where not known: projections).
  std::vector<double> loss, grad_norm, lr;
  std::optional<CheckpointMetrics> checkpoint;  // size, save and load (checkpoint_metrics.h)
  // Measured runs: each world rank's place and own figures ("ranks", with the
  // "stragglers" summary drawn from them) and the hardware found ("hardware").
  std::vector<RankFigures> ranks;
  std::optional<Hardware> hardware;
  // Projections: how far they can be trusted and what moves them
  // (core/sim/expected_error.h, core/sim/sensitivity.h); absent on measured
  // runs' own figures (their "projected" block carries them).
  std::optional<nlohmann::json> expected_error, sensitivity;
  // Measured runs: the same configuration projected (iteration, bubble, memory,
  // breakdown under the projection's "metrics" keys), or why it could not be.
  std::shared_ptr<const RunResult> projected;
  std::string projected_error;
  nlohmann::json extra = nlohmann::json::object();  // other top-level blocks: search, sweep, slice, timeline

  double median_iteration_s() const;
  // TFLOP/s, tokens/s, MFU and HFU at the median iteration: what "metrics" reports.
  Throughput throughput() const;
};

// The JSON of a result; the reader takes it back (throws JsonRefused naming
// `source`, the pointer and the rule; a "ptdp.result/1" file is named as the old schema).
nlohmann::json to_json(const RunResult& r);
RunResult read_result(const nlohmann::json& j, const std::string& source = "result");

// The "metrics" throughput keys for an iteration time: throughput()'s figures
// (accounting/throughput.h), each under its field's name (peak_tflops as
// peak_tflops_used; a figure it cannot know null), beside flops_per_iteration
// (model, eq3, no_recompute, hardware), model_flops_convention (what they
// count, see flops.h), peak_source and "utilization" (the peak MFU and HFU
// used and their definitions).
nlohmann::json throughput_metrics(const Config& cfg, double iteration_s);

nlohmann::json to_json(const MemoryBreakdown& m);

// Analytical bubble of the plan: (p−1)/m, and (p−1)/(v·m) for interleaved
// schedules; a schedule may state its own (ScheduleInfo::analytical_bubble).
double analytical_bubble(const Plan& p);

}  // namespace ptdp
