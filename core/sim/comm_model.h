// Communication times on a machine's links, α–β with the bus-bandwidth factors
// of nccl-tests: ring all-reduce moves 2(n−1)/n of the buffer per rank,
// all-gather and reduce-scatter (n−1)/n. A group inside one node runs at the
// NVLink collective rate; a group across nodes at the share of the nodes'
// network adapters its members on a node get (all groups of a node run the
// same collective at once: SPMD), capped by NVLink. A calibration overrides the
// rates of the link classes it measured.
#pragma once
#include <vector>

#include "core/topology/collective.h"
#include "core/config/machine.h"
#include "core/topology/topology.h"

namespace ptdp {

struct Calibration;

// Where a group's ranks sit: its size and how many of them share each node.
struct Placement {
  int size = 1;
  int per_node = 1;
  bool single_node() const { return per_node >= size; }
};

class CommModel {
 public:
  CommModel(const Machine& machine, const Calibration* calibration);

  // `bytes`: the buffer each rank holds (all-reduce), or the full gathered /
  // scattered buffer (all-gather, reduce-scatter).
  double all_reduce(double bytes, Placement g) const;
  double all_gather(double bytes, Placement g) const;
  double reduce_scatter(double bytes, Placement g) const;
  // One message between two ranks; `senders_per_node` ranks of the sending
  // node send across nodes at the same time and share its adapters.
  double p2p(double bytes, bool same_node, int senders_per_node) const;

  // Bus bandwidth (bytes/s) and per-step latency (s) a group's collective gets.
  double busbw(Placement g, Collective c) const;
  double step_latency(Placement g) const;

 private:
  double collective(double bytes, Placement g, Collective c, int steps) const;
  const Machine& machine_;
  const Calibration* calibration_;
};

// A group of `topo` (global ranks, e.g. topo.tp_group(r)): its size and how many of
// its members share the node of its first rank.
Placement group_placement(const Topology& topo, const std::vector<int>& group);
// The tensor- and data-parallel groups of a (t, ·, d) layout with `gpus_per_node` ranks a node.
Placement tp_placement(int t, int gpus_per_node);
Placement dp_placement(int t, int dp, int gpus_per_node);

}  // namespace ptdp
