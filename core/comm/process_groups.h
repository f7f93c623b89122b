// The communicators of one rank: world and the sub-groups its 3D position gives.
// Built once from the topology and passed to whoever communicates.
#pragma once
#include <memory>

#include "core/comm/communicator.h"
#include "core/comm/recording_communicator.h"
#include "core/topology/topology.h"

namespace ptdp {

struct ProcessGroups {
  // Records the collectives of the groups below while the executor runs.
  std::unique_ptr<CommRecorder> recorder = std::make_unique<CommRecorder>();
  Topology topology;
  int world_rank = 0;
  Coord coord;
  Communicator* world = nullptr;                 // all ranks (not owned)
  std::unique_ptr<Communicator> tp;              // same (dp, pp): tensor-parallel group
  std::unique_ptr<Communicator> dp;              // same (tp, pp): data-parallel group
  std::unique_ptr<Communicator> pp;              // same (tp, dp): pipeline, rank = stage
  std::unique_ptr<Communicator> model_parallel;  // same dp: tensor × pipeline ranks
  std::unique_ptr<Communicator> embedding;       // first and last stage of this pipeline

  bool first_stage() const { return coord.pp == 0; }
  bool last_stage() const { return coord.pp == topology.pp - 1; }
};

// Splits `world` into the groups of `topo` (collective over world).
// tp_ring: the tensor-parallel group also connects each rank to its ring
// neighbours (plan.tp_comm_overlap's point-to-point, core/model/tp_overlap.h).
ProcessGroups make_process_groups(Communicator& world, const Topology& topo, bool tp_ring = false);

}  // namespace ptdp
