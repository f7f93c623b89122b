// Topology tables written out by hand: Megatron's order (tensor rank fastest,
// then data, then pipeline) for 8 and 16 ranks, groups and node placement.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/topology/topology.h"

namespace ptdp {
namespace {

using Groups = std::vector<std::vector<int>>;

Groups all_groups(const Topology& t, std::vector<int> (Topology::*group)(int) const) {
  Groups out;
  for (int r = 0; r < t.world(); ++r) {
    auto g = (t.*group)(r);
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  }
  return out;
}

TEST(Topology, EightRanksT2P2D2) {
  const Topology topo{2, 2, 2, 8};
  // rank: (tp, dp, pp)
  const Coord expect[8] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}};
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(topo.coord(r), expect[r]) << "rank " << r;
    EXPECT_EQ(topo.rank_of(expect[r]), r);
  }
  EXPECT_EQ(all_groups(topo, &Topology::tp_group), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(all_groups(topo, &Topology::dp_group), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(all_groups(topo, &Topology::pp_group), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(all_groups(topo, &Topology::embedding_group), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
}

// Megatron-LM's documented example: 16 GPUs, t = 2, p = 4, d = 2.
TEST(Topology, SixteenRanksT2P4D2) {
  const Topology topo{2, 4, 2, 8};
  EXPECT_EQ(all_groups(topo, &Topology::tp_group),
            (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
  EXPECT_EQ(all_groups(topo, &Topology::dp_group),
            (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
  EXPECT_EQ(all_groups(topo, &Topology::pp_group),
            (Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}));
  EXPECT_EQ(all_groups(topo, &Topology::embedding_group), (Groups{{0, 12}, {1, 13}, {2, 14}, {3, 15}}));
  EXPECT_EQ(topo.coord(13), (Coord{1, 0, 3}));
  // 8 GPUs a node: stages 0-1 on node 0, stages 2-3 on node 1.
  EXPECT_EQ(topo.node_ranks(5), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(topo.same_node(0, 7));
  EXPECT_FALSE(topo.same_node(7, 8));
}

TEST(Topology, TensorGroupsStayInsideANodeWhenTheyFit) {
  for (int t : {1, 2, 4, 8})
    for (int dp : {1, 2, 3})
      for (int p : {1, 2, 4}) {
        const Topology topo{t, p, dp, 8};
        for (int r = 0; r < topo.world(); ++r)
          for (int peer : topo.tp_group(r)) EXPECT_TRUE(topo.same_node(r, peer)) << t << p << dp;
      }
}

TEST(Topology, ColoursIdentifyGroups) {
  const Topology topo{2, 4, 2, 8};
  for (int a = 0; a < 16; ++a)
    for (int b = 0; b < 16; ++b) {
      const auto in = [&](const std::vector<int>& g) { return std::find(g.begin(), g.end(), b) != g.end(); };
      EXPECT_EQ(topo.tp_color(a) == topo.tp_color(b), in(topo.tp_group(a)));
      EXPECT_EQ(topo.dp_color(a) == topo.dp_color(b), in(topo.dp_group(a)));
      EXPECT_EQ(topo.pp_color(a) == topo.pp_color(b), in(topo.pp_group(a)));
    }
  EXPECT_THROW(topo.coord(16), std::out_of_range);
}

}  // namespace
}  // namespace ptdp
