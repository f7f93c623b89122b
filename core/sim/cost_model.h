// The cost of every instruction of a rank's program, for the simulator: the
// forward and backward of each model chunk on each pipeline rank (its layers,
// plus the embedding or output layer at the ends), the transfer of a boundary
// activation between stages (with scatter/gather and the adapters it shares),
// the tied-embedding and data-parallel gradient reductions (ZeRO-2/3's inside
// the passes: sharded_comm.h) and the optimizer step. Tables are built once,
// so a projection costs a lookup per instruction.
#pragma once
#include <vector>

#include "core/config/config.h"
#include "core/config/rank_dims.h"
#include "core/sim/dp_overlap.h"
#include "core/sim/layer_costs.h"
#include "core/sim/pipeline_sim.h"
#include "core/topology/topology.h"

namespace ptdp {

class CostModel {
 public:
  CostModel(const Config& cfg, const Calibration* calibration);

  // The rank's sizes every cost below was priced at; the projection's memory reads them too.
  const RankDims& dims() const { return dims_; }

  const PassCost& forward(int pp_rank, int chunk) const { return forward_[index(pp_rank, chunk)]; }
  const PassCost& backward(int pp_rank, int chunk) const { return backward_[index(pp_rank, chunk)]; }
  // Zero bubble: backward split into B (input gradient; with the embedding's
  // and head's whole backward) and W (the layers' weight-gradient GEMMs and the
  // fp32 gradient accumulation). B + W = backward.
  const PassCost& backward_input(int pp_rank, int chunk) const { return backward_input_[index(pp_rank, chunk)]; }
  const PassCost& backward_weight(int pp_rank, int chunk) const { return weight_grad_[index(pp_rank, chunk)]; }
  // The pass a compute instruction (F, B, W or the whole backward) runs.
  const PassCost& pass(int pp_rank, const Instr& compute) const;
  // One boundary activation (or its gradient) from pipeline rank src to dst.
  double transfer(int src, int dst) const;
  double tied_reduce() const { return tied_reduce_; }
  // The whole data-parallel reduction after the flush (overlap_grad_reduce off):
  // gradients, and the distributed optimizer's parameter all-gather.
  double dp_reduce(int pp_rank) const { return dp_reduce_[static_cast<std::size_t>(pp_rank)]; }
  // The all-gather alone (0 without the distributed optimizer).
  double param_gather(int pp_rank) const { return param_gather_[static_cast<std::size_t>(pp_rank)]; }
  // With overlap_grad_reduce, d > 1 and data-parallel communication on: each
  // rank's buckets (dp_overlap.h); else empty.
  const std::vector<DpOverlap>& dp_overlap() const { return dp_overlap_; }
  double optimizer(int pp_rank) const { return optimizer_[static_cast<std::size_t>(pp_rank)]; }

  // Durations for simulate_pipeline: sends block the sender for the transfer
  // (Megatron's paired send/receive waits for completion). With dp_overlap(),
  // reduce_grads ends when the rank's buckets are reduced, then gathers.
  PipelineCosts pipeline_costs() const;

  const LayerCosts& layer() const { return layer_; }
  const EdgeCosts& edges() const { return edges_; }

 private:
  std::size_t index(int pp_rank, int chunk) const { return static_cast<std::size_t>(pp_rank * v_ + chunk); }
  void build_chunk_costs(const Config& cfg, const DeviceRates& dev, const CommModel& comm, Placement dp);
  void build_step_costs(const Config& cfg, const CommModel& comm, const Topology& topo);
  void switch_off(const Mechanisms& on);
  double boundary_transfer(const Config& cfg, const CommModel& comm, const Topology& topo, int src, int dst) const;

  int p_, v_;
  RankDims dims_;  // the rank's sizes, built once for every cost below
  LayerCosts layer_;
  EdgeCosts edges_;
  std::vector<PassCost> forward_, backward_;  // [pp_rank·v + chunk]
  std::vector<PassCost> backward_input_, weight_grad_;  // [pp_rank·v + chunk]
  std::vector<double> to_next_, to_prev_;     // transfer from rank r to r+1 and to r−1 (wrapping)
  double tied_reduce_ = 0;
  std::vector<double> dp_reduce_, param_gather_, optimizer_;
  std::vector<DpOverlap> dp_overlap_;  // [pp_rank]
};

}  // namespace ptdp
