// Whether a result's figures can be a real run's, and whether two results are
// of one layout: the checks the regression gate (`ptdp compare`, `ptdp
// history`) and `ptdp sweep --collect` share, so neither takes what the other
// refuses. A result passes when its gated figures are finite, positive,
// normal and within physical bounds, its median is its samples' median, its
// TFLOP/s follow from its FLOPs and its iteration time, and no iteration is
// faster than its FLOPs allow at its machine's peak.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/results/result.h"

namespace ptdp {

// The longest one measured thing may take (an iteration, a benchmark run):
// 10^6 s, 11.6 days, far beyond any iteration of the paper's 1T model.
inline constexpr double kMaxSeconds = 1e6;

// Why `x` is not a finite, positive, normal (not denormal) number of at most
// `max`, or "": "is not a finite positive number (got -1)", "is denormal (got
// 4.9e-324)", "is above 1e+06 (got 1e+300)".
std::string positive_figure_problem(double x, double max);

// One implausible figure: the dotted field ("metrics.iteration_s.median") and why.
struct FigureProblem {
  std::string field, rule;
};

// Every reason the gated figures of result `r` (a ptdp.result/2 object)
// cannot be a run's; empty when they can. Gated: metrics.model_tflops_per_gpu
// (at most kMaxRate), metrics.iteration_s.median and every sample (at most
// kMaxSeconds), metrics.flops_per_iteration.model. Then the median against
// the samples', the TFLOP/s against flops / (t·p·d · median), and the fastest
// iteration against flops / (t·p·d · machine.peak_tflops[plan.precision]).
std::vector<FigureProblem> implausible_figures(const nlohmann::json& r);

// Why measured result `r`'s utilisation cannot be this hardware's, or "": its
// MFU or HFU above 100% of the peak it names (machine.peak_tflops for the
// plan's precision), so that peak is below what the machine did: "MFU 112%,
// HFU 115% of machine 'cpu-host''s 0.09 TFLOP/s fp32 peak (measured: ...)".
// `ptdp train` records it in hardware.errors and prints it as an error.
std::string utilization_above_peak(const RunResult& r);

// Why result `r` cannot be filed as `claimed`, or "": its own "mode" says
// otherwise, or a result marked measured carries a projection's provenance.
std::string mode_contradiction(const nlohmann::json& r, ResultMode claimed);

// The layout fields of two results (or {"model", "plan"} objects) that
// differ: "plan.dp 1 in BASE, 2 in NEW; model.layers ..." (the plan's sizes,
// schedule, recompute and precision; the model's shape), or "" when none does.
std::string layout_difference(const nlohmann::json& a, const nlohmann::json& b, const std::string& a_name,
                              const std::string& b_name);

}  // namespace ptdp
