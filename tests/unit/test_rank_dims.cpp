// RankDims: the per-rank sizes of a Table 1 row worked out by hand; the
// collectives' names and bus factors; group placement from the topology.
#include <gtest/gtest.h>

#include "core/topology/collective.h"
#include "core/config/rank_dims.h"
#include "core/sim/comm_model.h"

namespace ptdp {
namespace {

// Table 1's 18.4B row: h = 6144, a = 48, s = 2048, V = 51200, t = 8 (here b = 2).
TEST(RankDims, Table1RowByHand) {
  Model m;
  m.layers = 40, m.hidden = 6144, m.heads = 48, m.seq_len = 2048, m.vocab = 51200;
  Plan p;
  p.tp = 8, p.micro_batch = 2, p.precision = Precision::bf16;
  const RankDims r(m, p);
  EXPECT_EQ(r.b, 2);
  EXPECT_EQ(r.s, 2048);
  EXPECT_EQ(r.n, 4096);       // b·s
  EXPECT_EQ(r.h, 6144);
  EXPECT_EQ(r.f, 3072);       // 4h/t
  EXPECT_EQ(r.a, 6);          // 48/8 heads
  EXPECT_EQ(r.head_dim, 128);        // 6144/48
  EXPECT_EQ(r.vt, 6400);      // 51200 (already a multiple of 128) / 8
  EXPECT_EQ(r.t, 8);
  EXPECT_EQ(r.e, 2);
  m.vocab = 50257;            // GPT-2's vocabulary pads to 50304
  p.precision = Precision::fp32;
  EXPECT_EQ(RankDims(m, p).vt, 50304 / 8);
  EXPECT_EQ(RankDims(m, p).e, 4);
}

// Grouped-query attention: g kv heads split over t <= g, each replicated on t/g ranks when t > g.
TEST(RankDims, KvHeadsSplitOrReplicated) {
  Model m;
  m.layers = 2, m.hidden = 4096, m.heads = 32, m.kv_heads = 8, m.seq_len = 128, m.vocab = 128256;
  Plan p;
  p.tp = 4;
  EXPECT_EQ(RankDims(m, p).g, 2);
  EXPECT_EQ(RankDims(m, p).kv_copies, 1);
  p.tp = 16;
  EXPECT_EQ(RankDims(m, p).g, 1);
  EXPECT_EQ(RankDims(m, p).kv_copies, 2);
  EXPECT_EQ(RankDims(m, p).a, 2);
  m.kv_heads = 0;  // GPT: one kv head a query head
  EXPECT_EQ(RankDims(m, p).g, 2);
  EXPECT_EQ(RankDims(m, p).kv_copies, 1);
}

TEST(RankDims, ElementBytes) {
  EXPECT_EQ(element_bytes(Precision::fp32), 4);
  EXPECT_EQ(element_bytes(Precision::bf16), 2);
  EXPECT_EQ(element_bytes(Precision::fp16), 2);
}

TEST(Collective, NamesAndBusFactors) {
  EXPECT_EQ(collective_name(Collective::all_reduce), "all_reduce");
  EXPECT_EQ(collective_name(Collective::all_gather), "all_gather");
  EXPECT_EQ(collective_name(Collective::reduce_scatter), "reduce_scatter");
  EXPECT_EQ(collective_name(Collective::broadcast), "broadcast");
  EXPECT_EQ(collective_name(Collective::send_recv), "send_recv");
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 4), 1.5);       // 2·3/4
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_gather, 8), 0.875);     // 7/8
  EXPECT_DOUBLE_EQ(bus_factor(Collective::reduce_scatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::send_recv, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 1), 0.0);       // nothing moves
}

// (t, p, d) = (2, 2, 8) on 8-GPU nodes: rank = pp·16 + dp·2 + tp.
TEST(Placement, GroupsFromTheTopology) {
  const Topology topo{2, 2, 8, 8};
  const Placement tp = group_placement(topo, topo.tp_group(0));
  EXPECT_EQ(tp.size, 2);
  EXPECT_TRUE(tp.single_node());
  const Placement dp = group_placement(topo, topo.dp_group(0));  // ranks 0, 2, .., 14: 4 on each of 2 nodes
  EXPECT_EQ(dp.size, 8);
  EXPECT_EQ(dp.per_node, 4);
  EXPECT_FALSE(dp.single_node());
  const Placement tied = group_placement(topo, topo.embedding_group(0));  // ranks 0 and 16
  EXPECT_EQ(tied.size, 2);
  EXPECT_EQ(tied.per_node, 1);
}

}  // namespace
}  // namespace ptdp
