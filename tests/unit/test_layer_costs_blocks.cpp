// The simulator's costs of Llama-style blocks (core/sim/layer_costs.cpp):
// each architecture field changes the term it should, by the amount its
// shapes give, and the paper's GPT block is costed as before.
#include <gtest/gtest.h>

#include "core/sim/cost_model.h"
#include "core/sim/layer_costs.h"
#include "core/sim/projector.h"

namespace ptdp {
namespace {

// Llama 3 8B's layer (h 4096, a 32, f 14336) with multi-head attention, GeLU,
// layernorm, learned positions, biases, tied embeddings; one field at a time is
// switched below. t = 8 H100s of one node, b = 1, s = 2048, unfused kernels.
Config block_config(int t) {
  Config c;
  c.model = {2, 4096, 32, 2048, 128256, 14336};
  c.plan.precision = Precision::bf16;
  c.plan.tp = t, c.plan.pp = 1, c.plan.micro_batch = 1, c.plan.global_batch = 1;
  c.plan.fused_ops = false;
  c.machine = load_machine("h100-80gb", default_machines_dir());
  return c;
}

struct Rig {
  DeviceRates dev;
  CommModel comm;
  Placement tp;
  explicit Rig(const Config& c)
      : dev(c.machine, c.plan.precision, nullptr), comm(c.machine, nullptr),
        tp(tp_placement(c.plan.tp, c.machine.gpus_per_node)) {}
  LayerCosts layer(const Config& c) const {
    return layer_costs(c.model, c.plan, RankDims(c.model, c.plan), dev, comm, tp);
  }
  double gemm(double m, double n, double k) const { return dev.gemm_seconds({m, n, k}); }
};

TEST(LayerCostsBlocks, GqaRunsQAndASmallerKvGemm) {
  Config mha = block_config(8), gqa = mha;
  gqa.model.kv_heads = 8;  // g_r = 1: kv 2·128 columns instead of q's 512 and kv's 1024
  const Rig rig(mha);
  const double n = 2048, h = 4096;
  const double expected = rig.gemm(n, 512, h) + rig.gemm(n, 256, h) - rig.gemm(n, 1536, h);
  EXPECT_NEAR(rig.layer(gqa).forward.gemm - rig.layer(mha).forward.gemm, expected, 1e-12);
  EXPECT_LT(rig.layer(gqa).forward.attention, rig.layer(mha).forward.attention);  // fewer k, v bytes moved
  EXPECT_EQ(rig.layer(gqa).backward.tp_comm, rig.layer(mha).backward.tp_comm);     // t <= g: nothing replicated
}

TEST(LayerCostsBlocks, ReplicatedKvGradientsAreSummedEachMicroBatch) {
  Config mha = block_config(8), gqa = mha;
  gqa.model.kv_heads = 2;  // t = 8 > g = 2: each kv head on 4 ranks
  const Rig rig(mha);
  const double grads = 4.0 * 2 * 128 * 4096 + 4.0 * 2 * 128;  // fp32 (2d, h) weight and (2d) bias
  const double sum = rig.comm.all_reduce(grads, Placement{4, 4});
  EXPECT_GT(sum, 0);
  EXPECT_NEAR(rig.layer(gqa).backward.tp_comm - rig.layer(mha).backward.tp_comm, sum, 1e-15);
  EXPECT_EQ(rig.layer(gqa).forward.tp_comm, rig.layer(mha).forward.tp_comm);
}

TEST(LayerCostsBlocks, SwigluRunsGateAndUpAsOneWiderGemm) {
  Config gelu = block_config(8), swiglu = gelu;
  swiglu.model.activation = Activation::swiglu;
  const Rig rig(gelu);
  const double n = 2048, h = 4096, f = 14336.0 / 8;
  EXPECT_NEAR(rig.layer(swiglu).forward.gemm - rig.layer(gelu).forward.gemm, rig.gemm(n, 2 * f, h) - rig.gemm(n, f, h),
              1e-12);
  // Unfused with biases: bias on 2f/t (read, write), silu (read, write), product (read two, write)
  // against GeLU's bias and activation: 9 against 4 (n, f/t) passes, one kernel more.
  const double e = 2, passes = 5 * n * f * e;
  EXPECT_NEAR(rig.layer(swiglu).forward.memory - rig.layer(gelu).forward.memory, rig.dev.memory_seconds(passes, 1),
              1e-12);
}

TEST(LayerCostsBlocks, NoBiasesNoBiasKernelsAndRopeRotatesQAndK) {
  Config gpt = block_config(8), bare = gpt, rope = gpt;
  bare.model.bias = false;
  rope.model.position = Position::rope;
  const Rig rig(gpt);
  const double n = 2048, h = 4096, f = 14336.0 / 8, e = 2;
  // Unfused: two bias adds (n, h) and GeLU's (n, f/t), read and write, three kernels fewer.
  const double bias_bytes = 2 * 2 * e * n * h + 2 * e * n * f;
  EXPECT_NEAR(rig.layer(gpt).forward.memory - rig.layer(bare).forward.memory,
              rig.dev.memory_seconds(bias_bytes, 3), 1e-12);
  // RoPE: read and write q and k, (n, 4 + 4, 128), two kernels; no position table read.
  const double rope_bytes = 2 * n * 128 * e * (4 + 4);
  EXPECT_NEAR(rig.layer(rope).forward.memory - rig.layer(gpt).forward.memory,
              rig.dev.memory_seconds(rope_bytes, 2), 1e-12);
  const EdgeCosts a = edge_costs(gpt.model, gpt.plan, RankDims(gpt.model, gpt.plan), rig.dev, rig.comm, rig.tp);
  const EdgeCosts b = edge_costs(rope.model, rope.plan, RankDims(rope.model, rope.plan), rig.dev, rig.comm, rig.tp);
  EXPECT_LT(b.embedding_forward.memory, a.embedding_forward.memory);
}

TEST(LayerCostsBlocks, UntiedOutputHasNoTiedSum) {
  Config tied = block_config(1);
  tied.plan.pp = 2, tied.plan.global_batch = 2;
  Config untied = tied;
  untied.model.tied_embeddings = false;
  EXPECT_GT(CostModel(tied, nullptr).tied_reduce(), 0);
  EXPECT_EQ(CostModel(untied, nullptr).tied_reduce(), 0);
}

}  // namespace
}  // namespace ptdp
