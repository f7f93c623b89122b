// Communicator splits for the tensor, data, pipeline, model-parallel and embedding groups.
#include "core/comm/process_groups.h"

#include <stdexcept>
#include <string>

namespace ptdp {

ProcessGroups make_process_groups(Communicator& world, const Topology& topo) {
  if (world.size() != topo.world())
    throw std::invalid_argument("topology of " + std::to_string(topo.world()) + " ranks over a world of " +
                                std::to_string(world.size()));
  ProcessGroups g;
  g.topology = topo;
  g.world = &world;
  g.world_rank = world.rank();
  g.coord = topo.coord(g.world_rank);
  const int r = g.world_rank;
  g.tp = world.split(topo.tp_color(r), g.coord.tp);
  g.dp = world.split(topo.dp_color(r), g.coord.dp);
  g.pp = world.split(topo.pp_color(r), g.coord.pp);
  g.model_parallel = world.split(g.coord.dp, g.coord.pp * topo.t + g.coord.tp);
  // Ranks outside the first and last stage each get a group of their own.
  const bool ends = g.first_stage() || g.last_stage();
  g.embedding = world.split(ends ? topo.pp_color(r) : topo.world() + r, g.coord.pp);
  return g;
}

}  // namespace ptdp
