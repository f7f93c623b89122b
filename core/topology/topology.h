// Rank <-> (tp, dp, pp) coordinates and groups, as a pure function of the sizes.
// Megatron's order: the tensor-parallel rank varies fastest, then data-parallel,
// then pipeline: rank = pp·(t·d) + dp·t + tp. With t ≤ gpus_per_node a
// tensor-parallel group therefore never spans nodes.
#pragma once
#include <vector>

namespace ptdp {

struct Coord {
  int tp = 0;  // tensor-parallel rank, 0..t-1
  int dp = 0;  // data-parallel rank, 0..d-1
  int pp = 0;  // pipeline stage, 0..p-1
  bool operator==(const Coord&) const = default;
};

struct Topology {
  int tp = 1;             // tensor-parallel size t
  int pp = 1;             // pipeline-parallel size p
  int dp = 1;             // data-parallel size d
  int gpus_per_node = 1;  // ranks per node, for placement

  int world() const { return tp * pp * dp; }
  Coord coord(int rank) const;
  int rank_of(Coord c) const;
  int node_of(int rank) const { return rank / gpus_per_node; }
  bool same_node(int a, int b) const { return node_of(a) == node_of(b); }

  // Global ranks of each group containing `rank`, ordered by their rank in the group.
  std::vector<int> tp_group(int rank) const;  // same dp, pp; tp = 0..t-1
  std::vector<int> dp_group(int rank) const;  // same tp, pp; dp = 0..d-1
  std::vector<int> pp_group(int rank) const;  // same tp, dp; pp = 0..p-1
  // Ranks holding a copy of the tied word embedding: the first and last stage
  // of `rank`'s pipeline (one rank when p = 1).
  std::vector<int> embedding_group(int rank) const;
  // Ranks on the same node as `rank`.
  std::vector<int> node_ranks(int rank) const;

  // Split colours (one per group, the same for all its members), for communicator splits.
  int tp_color(int rank) const;
  int dp_color(int rank) const;
  int pp_color(int rank) const;
};

}  // namespace ptdp
