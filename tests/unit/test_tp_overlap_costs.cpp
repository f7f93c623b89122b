// tp_comm_overlap in the simulator (core/sim/layer_costs.cpp): the layer's
// sequence-parallel collectives as rings of t token blocks beside the GEMMs.
// Hidden communication shows less; the GEMMs pay for running on n/t rows at a
// time; nothing changes where there is no ring (t = 1).
#include <gtest/gtest.h>

#include "core/sim/cost_model.h"
#include "core/sim/projector.h"
#include "core/sim/search.h"

namespace ptdp {
namespace {

// A GPT-3-sized layer (h = 12288) on t = 8 H100s of one node, sequence parallel,
// b = 8: blocks of n/t = 2048 rows keep the GEMMs efficient.
Config sp_gpt(int t, bool overlap) {
  Config c;
  c.model = {8, 12288, 96, 2048, 51200, 0, 0.1};
  c.plan.precision = Precision::bf16;
  c.plan.tp = t, c.plan.pp = 1, c.plan.micro_batch = 8, c.plan.global_batch = 8;
  c.plan.sequence_parallel = true, c.plan.tp_comm_overlap = overlap;
  c.machine = load_machine("h100-80gb", default_machines_dir());
  return c;
}

TEST(TpOverlapCosts, RingsHideMostOfTheLayersCommunication) {
  const LayerCosts plain = CostModel(sp_gpt(8, false), nullptr).layer();
  const LayerCosts ring = CostModel(sp_gpt(8, true), nullptr).layer();
  for (const auto& [name, a, b] : {std::tuple{"forward", plain.forward, ring.forward},
                                   std::tuple{"backward", plain.backward, ring.backward}}) {
    EXPECT_GT(a.tp_comm, 0.0) << name;
    // Each step's transfer (1/8 of an (n, h) activation over NVLink) is shorter
    // than a block's GEMM at h = 12288: under a tenth of the collectives shows.
    EXPECT_LT(b.tp_comm, 0.1 * a.tp_comm) << name;
    // The blocked GEMMs are no faster than the whole ones, and not much slower.
    EXPECT_GE(b.gemm, a.gemm * (1 - 1e-12)) << name;
    EXPECT_LT(b.gemm, 1.2 * a.gemm) << name;
    EXPECT_LT(b.total(), a.total()) << name;
  }
  EXPECT_DOUBLE_EQ(ring.weight_grad.gemm, plain.weight_grad.gemm);  // weight gradients run on all n rows
}

TEST(TpOverlapCosts, NoMoreIsHiddenThanTheGemmsLast) {
  // At 5 GB/s a step's transfer (25 MB) far outlasts a block's GEMM: the ring
  // can hide at most its GEMMs' time, and never shows more than the collectives.
  for (double gbs : {5.0, 0.0}) {
    Config plain = sp_gpt(8, false), ring = sp_gpt(8, true);
    if (gbs > 0) plain.machine.intra_node.bandwidth_gbs = ring.machine.intra_node.bandwidth_gbs = gbs;
    const PassCost a = CostModel(plain, nullptr).layer().forward, b = CostModel(ring, nullptr).layer().forward;
    EXPECT_GE(b.tp_comm, a.tp_comm - b.gemm) << gbs;
    EXPECT_LE(b.tp_comm, a.tp_comm) << gbs;
    if (gbs > 0) {
      EXPECT_GT(b.tp_comm, 0.9 * a.tp_comm);
    }
  }
}

TEST(TpOverlapCosts, OneRankHasNoRing) {
  const LayerCosts a = CostModel(sp_gpt(1, false), nullptr).layer(), b = CostModel(sp_gpt(1, true), nullptr).layer();
  EXPECT_EQ(a.forward.total(), b.forward.total());
  EXPECT_EQ(a.backward.total(), b.backward.total());
  EXPECT_EQ(b.forward.tp_comm + b.backward.tp_comm, 0.0);
}

TEST(TpOverlapCosts, TheSearchTriesTheRingsOnlyWhenAsked) {
  SearchSpace space;
  space.micro_batches = {1, 8};
  for (const Candidate& c : search_plans(sp_gpt(8, false), space, nullptr)) EXPECT_FALSE(c.config.plan.tp_comm_overlap);
  space.tp_comm_overlap = true;
  const std::vector<Candidate> ranked = search_plans(sp_gpt(8, false), space, nullptr);
  ASSERT_EQ(ranked.size(), 4u);  // b = 1, 8, each with and without the rings
  // At b = 8 the rings win; at b = 1 blocks of 256 rows make the GEMMs slower than
  // the communication they hide, and the plain plan ranks first.
  EXPECT_TRUE(ranked.front().config.plan.tp_comm_overlap);
  EXPECT_EQ(ranked.front().config.plan.micro_batch, 8);
  for (const Candidate& c : ranked)
    if (c.config.plan.micro_batch == 1) {
      EXPECT_FALSE(c.config.plan.tp_comm_overlap);
      break;
    }
}

}  // namespace
}  // namespace ptdp
