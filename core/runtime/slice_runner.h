// A slice: one pipeline stage's share of a large configuration, run for real on
// this device at the shard shapes of tensor rank 0 and the plan's micro-batch
// (every virtual chunk of the stage, forward and backward, with parameters,
// gradients, optimizer state and in-flight activations in memory), with every
// group a ShapeOnlyCommunicator (nothing communicated). Its measured forward,
// backward and optimizer costs then replace the cost model's compute in a
// simulation of the whole pipeline (core/sim/slice_projection.h).
#pragma once
#include "core/config/config.h"
#include "core/sim/slice.h"

namespace ptdp {

// Runs the slice. The config must be valid and the device usable. Throws
// OutOfMemory when the stage's share does not fit on this device.
SliceMeasurement measure_slice(const Config& cfg, const SliceOptions& options);

}  // namespace ptdp
