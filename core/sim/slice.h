// A slice (`ptdp slice`): one pipeline stage's share of a large configuration,
// run for real on one device (core/runtime/slice_runner.h), whose measured costs
// then stand in for the cost model's compute in a projection of the whole
// configuration (core/sim/slice_projection.h). What a slice runs and what it
// measures, shared by the two.
#pragma once
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/results/timeline.h"
#include "core/tensor/dtype.h"

namespace ptdp {

struct SliceOptions {
  Device device = Device::cpu;  // the backend the stage runs on
  int stage = 0;               // pipeline rank to run, in [0, p)
  int iterations = 3;          // warm-up included
  int warmup = 1;              // leading iterations left out of the means
  std::int64_t cpu_memory_limit = 0;  // testing aid: > 0 caps the CPU allocator (out of memory beyond it)
};

struct SliceMeasurement {
  int stage = 0;
  Timeline timeline;                           // the stage's last iteration
  // Means over the timed iterations: one micro-batch's forward and backward
  // per chunk (compute and the stand-in collectives), and the optimizer step.
  std::vector<double> forward_s, backward_s;
  double optimizer_s = 0;
  double iteration_s = 0;                      // mean wall time of the timed iterations
  std::int64_t peak_bytes = 0;                 // the allocator's peak over the run
  nlohmann::json backend;                      // ops name and device info
};

}  // namespace ptdp
