// Gradient clipping by the global L2 norm over the whole model: each rank sums
// the squares of the gradients it counts (replicated copies once), the sum is
// all-reduced over the model-parallel group (tensor × pipeline ranks of one
// data-parallel replica), and every rank scales by the same factor.
#pragma once
#include "core/comm/communicator.h"
#include "core/model/param.h"

namespace ptdp {

// The global gradient norm, identical on all ranks of `model_parallel`.
double global_grad_norm(Ops& ops, const ParamList& params, Communicator& model_parallel);

// The factor that clips a gradient of global norm `norm` to `max_norm`
// (1 when it is within, or when max_norm is 0: clipping off).
double clip_factor(double norm, double max_norm);

}  // namespace ptdp
