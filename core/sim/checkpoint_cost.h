// Projected save and load times of a checkpoint on the machine profile's
// parallel filesystem (machine.h Filesystem), for `ptdp project` and the
// paper's Section 5.10.
//
// A fluid model with two limits, per direction: the filesystem moves at most
// F·e bytes/s in aggregate (F its peak write or read bandwidth, e the
// profile's efficiency for that direction) and a node at most N·e (N its
// storage NICs). A save (or load) takes the larger of
//   (all bytes moved) / (F·e)   and   (the busiest node's bytes) / (N·e),
// exact when every node moves the same bytes and the time at which both limits
// are met otherwise (a node done early leaves its share to the others).
// Who moves what is checkpoint_size.h's: a save writes one copy of the state;
// a load has every rank read its own, so without the distributed optimizer the
// d data-parallel replicas read d copies. Ranks sit on nodes as the topology
// places them (tensor-parallel rank fastest, gpus_per_node to a node).
#pragma once
#include <optional>
#include <string>

#include "core/accounting/checkpoint_size.h"
#include "core/config/config.h"
#include "core/results/checkpoint_metrics.h"

namespace ptdp {

struct CheckpointTransfer {
  double seconds = 0;
  double bytes = 0;          // moved by all ranks together
  double node_bytes_max = 0; // by the busiest node
  int nodes = 0;             // nodes that move any
  std::string bound;         // which limit sets the time: "filesystem" or "node"
  double gbs() const { return seconds > 0 ? bytes / seconds / 1e9 : 0.0; }
};

struct CheckpointCost {
  CheckpointSize size;
  std::optional<CheckpointTransfer> save, load;  // absent when the machine's filesystem is unknown
};

CheckpointCost checkpoint_cost(const Config& cfg);

// The result's "checkpoint" block of a projection: the size, and the times
// where the profile has a filesystem; "filesystem" echoes its figures, the
// nodes and the limit that binds each direction.
CheckpointMetrics projected_checkpoint(const Config& cfg);

}  // namespace ptdp
