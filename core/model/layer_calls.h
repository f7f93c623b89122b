// One micro-batch through one decoder layer on a recording Ops (recording_ops.h):
// the calls its forward makes and those of its backward, with what recompute
// re-runs in it, exactly as the runtime runs them (a one-layer ModelChunk, so
// the plan's recompute is the runtime's own). The test of the layer's records
// (layer_ops.h) and the kernel benchmarks use it.
#pragma once
#include <vector>

#include "core/comm/communicator.h"
#include "core/config/model.h"
#include "core/config/plan.h"
#include "core/layer_ops/layer_op.h"
#include "core/model/recording_ops.h"

namespace ptdp {

struct LayerCalls {
  std::vector<RecordingOps::Call> forward, backward;
};

// Layer 0 of (m, p) as tensor-parallel rank tp.rank() of tp.size(), on `ops`,
// from x (b, s, h) (this rank's (b, s/t, h) rows under sequence parallelism).
LayerCalls record_layer_calls(Ops& ops, Communicator& tp, const Model& m, const Plan& p, const Tensor& x);

// The call at `index` of the record's pass (the forward's or the backward's
// list), taken out of `calls`; std::runtime_error when it is not the record's
// kind and sizes (the records and the layer disagree).
RecordingOps::Call take_call(LayerCalls& calls, std::size_t index, const LayerOp& record);

}  // namespace ptdp
