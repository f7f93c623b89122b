// The result JSON of one run ("ptdp.result/1"), shared by measured runs
// (`ptdp train`) and projections (`ptdp project`), so the two sit side by side.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/config/config.h"
#include "core/metrics/memory_model.h"

namespace ptdp {

// {"schema", "system": "ptdp", "mode", "model", "plan", "machine", "optimizer", "software"}.
// mode: "measured", "projected" or "slice".
nlohmann::json result_header(const Config& cfg, const std::string& mode);

// Throughput metrics for an iteration time: flops_per_iteration (model, eq3,
// no_recompute, hardware), model_tflops_per_gpu, hardware_tflops_per_gpu,
// aggregate_pflops, percent_of_peak (null without a peak for the precision),
// tokens_per_s, sequences_per_s, peak_tflops_used, mfu and hfu (fractions of
// the peak, null without one; see utilization() in flops.h) and "utilization"
// (the peak they used and their definitions).
nlohmann::json throughput_metrics(const Config& cfg, double iteration_s);

nlohmann::json to_json(const MemoryBreakdown& m);

// Analytical bubble of the plan: (p−1)/m, and (p−1)/(v·m) for interleaved schedules.
double analytical_bubble(const Plan& p);

}  // namespace ptdp
