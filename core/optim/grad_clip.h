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

// Scales gradients by max_norm/norm when norm > max_norm (max_norm > 0). Returns norm.
double clip_grad_norm(Ops& ops, const ParamList& params, Communicator& model_parallel, double max_norm);

}  // namespace ptdp
