// What every model part needs: the ops backend, the tensor-parallel group and
// the sizes. Passed explicitly; nothing is looked up globally.
#pragma once
#include <cstdint>

#include "core/comm/communicator.h"
#include "core/config/model.h"
#include "core/config/plan.h"
#include "core/kernels/ops.h"

namespace ptdp {

struct ModelContext {
  Ops& ops;
  Communicator& tp;    // tensor-parallel group (size t)
  const Model& model;
  const Plan& plan;

  int t() const { return tp.size(); }
  int tp_rank() const { return tp.rank(); }
  // Tokens split over the tensor-parallel ranks outside the GEMMs (token_split.h).
  bool sp() const { return plan.sequence_parallel && t() > 1; }
  // Its collectives pipelined with the GEMMs block by block (tp_overlap.h).
  bool tp_overlap() const { return sp() && plan.tp_comm_overlap; }
  std::uint64_t seed() const { return plan.seed; }
  // Standard deviation of the initial weights (GPT-2): 0.02, and 0.02/sqrt(2l)
  // for the projections that write into the residual stream.
  float init_std() const { return 0.02f; }
  float residual_init_std() const;
};

}  // namespace ptdp
