// Topology arithmetic: coordinates, groups, node placement.
#include "core/topology/topology.h"

#include <stdexcept>
#include <string>

namespace ptdp {

Coord Topology::coord(int rank) const {
  if (rank < 0 || rank >= world())
    throw std::out_of_range("rank " + std::to_string(rank) + " outside a world of " + std::to_string(world()));
  return {rank % tp, (rank / tp) % dp, rank / (tp * dp)};
}

int Topology::rank_of(Coord c) const { return c.pp * tp * dp + c.dp * tp + c.tp; }

std::vector<int> Topology::tp_group(int rank) const {
  Coord c = coord(rank);
  std::vector<int> g;
  for (c.tp = 0; c.tp < tp; ++c.tp) g.push_back(rank_of(c));
  return g;
}

std::vector<int> Topology::dp_group(int rank) const {
  Coord c = coord(rank);
  std::vector<int> g;
  for (c.dp = 0; c.dp < dp; ++c.dp) g.push_back(rank_of(c));
  return g;
}

std::vector<int> Topology::pp_group(int rank) const {
  Coord c = coord(rank);
  std::vector<int> g;
  for (c.pp = 0; c.pp < pp; ++c.pp) g.push_back(rank_of(c));
  return g;
}

std::vector<int> Topology::embedding_group(int rank) const {
  Coord c = coord(rank);
  c.pp = 0;
  std::vector<int> g{rank_of(c)};
  c.pp = pp - 1;
  if (pp > 1) g.push_back(rank_of(c));
  return g;
}

std::vector<int> Topology::node_ranks(int rank) const {
  std::vector<int> g;
  const int first = node_of(rank) * gpus_per_node;
  for (int r = first; r < first + gpus_per_node && r < world(); ++r) g.push_back(r);
  return g;
}

int Topology::tp_color(int rank) const {
  const Coord c = coord(rank);
  return c.pp * dp + c.dp;
}

int Topology::dp_color(int rank) const {
  const Coord c = coord(rank);
  return c.pp * tp + c.tp;
}

int Topology::pp_color(int rank) const {
  const Coord c = coord(rank);
  return c.dp * tp + c.tp;
}

}  // namespace ptdp
