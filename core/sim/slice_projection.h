// Projecting a whole configuration from one measured pipeline stage (a slice,
// core/sim/slice.h): the stage's measured forward, backward and optimizer costs
// replace the cost model's compute in a simulation of the whole pipeline;
// communication stays with the cost model.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/sim/projector.h"
#include "core/sim/slice.h"

namespace ptdp {

struct SliceProjection {
  Projection projection;                  // the simulated pipeline with the measured compute
  std::vector<std::int64_t> rank_bytes;   // per pipeline rank: measured peak ± the model's difference
  std::vector<bool> rank_fits;            // each against the machine's memory
};

// The pipeline rank with the most modelled forward + backward time (ties: the lowest).
int heaviest_stage(const Config& cfg, const Calibration* calibration);

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
