// Communicator splits for the tensor, data, pipeline, model-parallel and embedding groups.
#include "core/comm/process_groups.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ptdp {

namespace {

// The distinct other ranks at offsets −1 and +1 around a ring of n (none when n = 1).
std::vector<int> ring_neighbours(int rank, int n) {
  std::vector<int> out;
  for (int peer : {(rank + n - 1) % n, (rank + 1) % n})
    if (peer != rank && std::find(out.begin(), out.end(), peer) == out.end()) out.push_back(peer);
  return out;
}

}  // namespace

ProcessGroups make_process_groups(Communicator& world, const Topology& topo, bool tp_ring) {
  if (world.size() != topo.world())
    throw std::invalid_argument("topology of " + std::to_string(topo.world()) + " ranks over a world of " +
                                std::to_string(world.size()));
  ProcessGroups g;
  g.topology = topo;
  g.world = &world;
  g.world_rank = world.rank();
  g.coord = topo.coord(g.world_rank);
  const int r = g.world_rank;
  const auto recorded = [&](std::unique_ptr<Communicator> c, CommGroup group) -> std::unique_ptr<Communicator> {
    return std::make_unique<RecordingCommunicator>(std::move(c), group, *g.recorder);
  };
  g.tp = recorded(world.split(topo.tp_color(r), g.coord.tp), CommGroup::tp);
  g.dp = recorded(world.split(topo.dp_color(r), g.coord.dp), CommGroup::dp);
  g.pp = recorded(world.split(topo.pp_color(r), g.coord.pp), CommGroup::pp);
  g.model_parallel = recorded(world.split(g.coord.dp, g.coord.pp * topo.tp + g.coord.tp), CommGroup::model_parallel);
  // Ranks outside the first and last stage each get a group of their own.
  const bool ends = g.first_stage() || g.last_stage();
  g.embedding = recorded(world.split(ends ? topo.pp_color(r) : topo.world() + r, g.coord.pp), CommGroup::embedding);
  // Pipeline transfers go to the neighbouring stages, around the ring for interleaving.
  g.pp->prepare_p2p(ring_neighbours(g.coord.pp, topo.pp));
  if (tp_ring) g.tp->prepare_p2p(ring_neighbours(g.coord.tp, topo.tp));
  return g;
}

}  // namespace ptdp
