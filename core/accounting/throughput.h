// Throughput of a configuration at one iteration time: model and hardware
// TFLOP/s per GPU, tokens and sequences a second, and the utilisation of the
// machine's peak (MFU, HFU; flops.h defines both). The one computation: the
// result's "metrics" (results/result.h) and every command's printed line read it.
// Letters: B global batch, s sequence, G = t·p·d GPUs, T iteration seconds.
#pragma once
#include <array>
#include <optional>
#include <string_view>

#include "core/config/config.h"

namespace ptdp {

struct Throughput {
  double model_flops = 0;              // per iteration: eq. (3) under full recompute, else the 72 form
  double hardware_flops = 0;           // per iteration: what the GPUs execute, recompute included
  double model_tflops_per_gpu = 0;     // model_flops / (G·T) / 10^12; 0 for T = 0
  double hardware_tflops_per_gpu = 0;  // hardware_flops / (G·T) / 10^12; 0 for T = 0
  double aggregate_pflops = 0;         // model_tflops_per_gpu · G / 10^3
  double tokens_per_s = 0;             // B·s / T; 0 for T = 0
  double sequences_per_s = 0;          // B / T; 0 for T = 0
  // The machine's dense peak for the plan's precision, and the figures drawn
  // from it; none where the profile states no peak (or T = 0 for MFU, HFU).
  std::optional<double> peak_tflops;
  std::optional<double> percent_of_peak;  // 100 · model_tflops_per_gpu / peak
  std::optional<double> mfu, hfu;         // utilization() of flops.h: fractions of the peak
};

Throughput throughput(const Config& cfg, double iteration_s);

// The result's metrics proportional to 1/T: a projection's error in T is theirs.
inline constexpr std::array<std::string_view, 3> kThroughputMetricNames = {"model_tflops_per_gpu", "sequences_per_s",
                                                                           "tokens_per_s"};

}  // namespace ptdp
