// Gradient clipping by the global L2 norm over the whole model: each rank sums
// the squares of the gradients it counts (replicated copies once), the sum is
// all-reduced over the model-parallel group (tensor × pipeline ranks of one
// data-parallel replica), and every rank scales by the same factor.
#pragma once
#include <vector>

#include "core/comm/communicator.h"
#include "core/model/param.h"

namespace ptdp {

// The global gradient norm, identical on all ranks of `model_parallel`.
double global_grad_norm(Ops& ops, const ParamList& params, Communicator& model_parallel);

// The L2 norm of `counted` (this rank's share of the gradients), its square
// summed over each of `groups` in turn (the distributed optimizer: dp, then t·p).
double global_norm(Ops& ops, const std::vector<const Tensor*>& counted, const std::vector<Communicator*>& groups);

// The factor that clips a gradient of global norm `norm` to `max_norm`
// (1 when it is within, or when max_norm is 0: clipping off).
double clip_factor(double norm, double max_norm);

}  // namespace ptdp
