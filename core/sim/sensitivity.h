// Where a projection's time goes and what moves it: the share of the
// iteration by cost class (GEMM, attention, memory-bound kernels,
// tensor-parallel, pipeline and data-parallel communication, bubble,
// optimizer), and the machine-profile rate whose ±kPerturbation change moves
// the iteration time most (each rate re-projected alone, so ~2 × 12
// projections per call).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.h"
#include "core/results/result.h"
#include "core/sim/calibration.h"
#include "core/sim/layer_costs.h"

namespace ptdp {

inline constexpr double kPerturbation = 0.10;

// Seconds per iteration by cost class; `passes` splits the forward and
// backward time (Breakdown::compute + tp_comm) into GEMM, attention and memory.
struct TimeShares {
  double gemm = 0, attention = 0, memory = 0, tp = 0, pp = 0, dp = 0, bubble = 0, optimizer = 0;
};
TimeShares time_shares(const Breakdown& b, const PassCost& passes);

// The rates perturbed, by their machine-profile field names.
std::vector<std::string> sensitivity_parameters(const Config& cfg);

// The "sensitivity" block: {"shares": {class: fraction of iteration_s}, "perturbation",
// "parameters": {name: [change at −p, change at +p]} (relative change of the
// iteration time), "most_sensitive": {"parameter", "perturbation", "change"}}.
nlohmann::json sensitivity(const Config& cfg, const TimeShares& shares, double iteration_s,
                           const Calibration* calibration);

}  // namespace ptdp
