// A slice: one pipeline stage's share of a large configuration, run for real on
// this device at the shard shapes of tensor rank 0 and the plan's micro-batch
// (every virtual chunk of the stage, forward and backward, with parameters,
// gradients, optimizer state and in-flight activations in memory), with every
// group a ShapeOnlyCommunicator (nothing communicated). Its measured forward,
// backward and optimizer costs then replace the cost model's compute in a
// simulation of the whole pipeline; communication stays with the cost model.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.h"
#include "core/results/timeline.h"
#include "core/sim/projector.h"

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

struct SliceProjection {
  Projection projection;                  // the simulated pipeline with the measured compute
  std::vector<std::int64_t> rank_bytes;   // per pipeline rank: measured peak ± the model's difference
  std::vector<bool> rank_fits;            // each against the machine's memory
};

// The pipeline rank with the most modelled forward + backward time (ties: the lowest).
int heaviest_stage(const Config& cfg, const Calibration* calibration);

// Runs the slice. The config must be valid and the device usable. Throws
// OutOfMemory when the stage's share does not fit on this device.
SliceMeasurement measure_slice(const Config& cfg, const SliceOptions& options);

// Every rank's forward/backward of chunk c: the measured stage's cost of c
// scaled by the model's ratio of rank r's compute to the measured stage's (the
// embedding and the output layer at the ends), plus the model's
// tensor-parallel time; the optimizer likewise; transfers and reductions from
// the model.
SliceProjection project_slice(const Config& cfg, const SliceMeasurement& m, const Calibration* calibration);

// The result: projected_result's figures with mode slice, the measured stage in
// the "slice" block, memory per rank and "fits"; "does_not_fit" when a rank's share does not fit.
RunResult slice_result(const Config& cfg, const SliceOptions& options, const SliceMeasurement& m,
                       const SliceProjection& sp, const Calibration* calibration);

// The result when the stage ran out of memory on this device: the cost model's
// projection (nothing measured), "fits": false, "slice": {"stage",
// "out_of_memory": the allocator's message} and "does_not_fit".
RunResult slice_out_of_memory_result(const Config& cfg, const SliceOptions& options, const std::string& why,
                                     const Calibration* calibration);

}  // namespace ptdp
