// The memory model of Llama-style blocks (issue 19): parameter shards with
// grouped-query attention split or replicated over t, SwiGLU's three matrices,
// RMSNorm's gamma, no biases, an untied output layer, no position table under
// RoPE; activation bytes of both formulas, worked out by hand.
#include <gtest/gtest.h>

#include "core/accounting/activation_bytes.h"
#include "core/accounting/checkpoint_size.h"
#include "core/accounting/flops.h"
#include "core/accounting/memory_model.h"
#include "tests/llama_test_util.h"

namespace ptdp {
namespace {

// h = 64, a = 8 (d = 8), g = 2, f = 96, s = 16, V = 128 (already a multiple of 128).
Model small_llama() {
  Model m{2, 64, 8, 16, 128, 96};
  m.kv_heads = 2;
  return test::llama_block(m);
}

Plan plan_with(int tp, int pp) {
  Plan p;
  p.tp = tp, p.pp = pp, p.micro_batch = 2, p.global_batch = 8, p.precision = Precision::fp32;
  return p;
}

TEST(MemoryBlocks, LayerShardByHand) {
  const Model m = small_llama();
  // t = 2 <= g: q (32, 64), kv (2·1·8, 64), out (64, 32), fc1 (2·48, 64), fc2 (64, 48), two gammas.
  const RankDims t2(m, plan_with(2, 1)), t4(m, plan_with(4, 1));
  EXPECT_EQ(layer_shard_parameter_count(m, t2), 32 * 64 + 16 * 64 + 64 * 32 + 96 * 64 + 64 * 48 + 2 * 64);
  // t = 4 > g: each rank holds one kv head (replicated on 2 ranks): kv (2·8, 64).
  EXPECT_EQ(layer_shard_parameter_count(m, t4), 16 * 64 + 16 * 64 + 64 * 16 + 48 * 64 + 64 * 24 + 2 * 64);
}

TEST(MemoryBlocks, ShardsAddUpToTheModel) {
  const Model m = small_llama();
  const std::int64_t h = 64, kv_weights = 2 * 2 * 8 * h, norms = 2 * h;
  // Split (t <= g): the t shards hold the layer once, the norms t times.
  EXPECT_EQ(2 * layer_shard_parameter_count(m, RankDims(m, plan_with(2, 1))), layer_parameter_count(m) + norms);
  // Replicated (t = 4, g = 2): kv twice as well.
  const RankDims t4(m, plan_with(4, 1));
  EXPECT_EQ(4 * layer_shard_parameter_count(m, t4), layer_parameter_count(m) + 3 * norms + kv_weights);
  // Two stages at t = 1: embedding on the first, untied output and final norm on
  // the last, no copy of the word embedding (untied) and no position table (rope).
  const Plan one = plan_with(1, 1), p = plan_with(1, 2);
  EXPECT_EQ(rank_parameter_count(m, one, RankDims(m, one), 0), parameter_count(m));  // one stage: both V·h
  const RankDims r(m, p);
  EXPECT_EQ(rank_parameter_count(m, p, r, 0) + rank_parameter_count(m, p, r, 1), parameter_count(m));
  Model tied = m;
  tied.tied_embeddings = true;
  EXPECT_EQ(rank_parameter_count(tied, p, r, 0) + rank_parameter_count(tied, p, r, 1),  // tying changes no size
            parameter_count(tied) + 128 * h);
}

TEST(MemoryBlocks, UntiedCheckpointSavesTheOutputLayer) {
  const Model m = small_llama();
  const Plan p = plan_with(1, 2);
  const MemoryTraits tr = memory_traits(Device::cpu, Precision::fp32, false);
  const CheckpointSize c = checkpoint_size(m, p, tr);
  EXPECT_EQ(c.weight_bytes[0] + c.weight_bytes[1], parameter_count(m) * 4);
}

TEST(MemoryBlocks, PtdpLayerActivationsByHand) {
  const Model m = small_llama();
  Plan p = plan_with(2, 1);  // n = 32; a/t·d = 32, g_r = 1: kv 16, f/t = 48
  const MemoryTraits tr = memory_traits(Device::cpu, Precision::fp32, false);
  // x, ln1, x2, ln2 4·64; q 32, kv 16, attn 32; fc1 (gate, up) 96, swiglu 48; rstd of two rmsnorms.
  const std::int64_t kept = 32 * ((4 * 64 + 32 + 16 + 32 + 96 + 48) * 4 + 2 * 4);
  const RankDims r(m, p);
  EXPECT_EQ(layer_activation_bytes(m, p, r, tr), kept + 32 * 4 * 16 * 4);  // + probs (a/t, s) per token
  p.recompute = Recompute::selective;
  EXPECT_EQ(layer_activation_bytes(m, p, r, tr), kept);
  // Output layer: x, lnf (64 each), its rstd, logits 64 columns, two fp32 statistics.
  EXPECT_EQ(head_activation_bytes(m, r, tr), 32 * (2 * 64 * 4 + 4) + 32 * (64 * 4 + 8));
}

TEST(MemoryBlocks, KorthikantiGeneralisedByHand) {
  Model m = small_llama();
  Plan p = plan_with(2, 1);
  p.recompute = Recompute::selective;
  const MemoryTraits tr = memory_traits(Device::cuda, Precision::bf16, true);  // e = 2, fused attention
  // Replicated 4·e·n·h; split e·n·(q 32 + out-proj input 32 + kv 16 + gate, up 96 + fc2 input 48);
  // fused attention's fp32 log-sum-exp per (token, head on this rank).
  const std::int64_t expected = 4 * 2 * 32 * 64 + 2 * 32 * (32 + 32 + 16 + 96 + 48) + 4 * 32 * 4;
  const RankDims r(m, p);
  EXPECT_EQ(activation_bytes(m, p, r, tr, ActivationFormula::korthikanti).layer, expected);
  // Zero-bubble W: output gradients (q+kv 48, proj 64, fc1 96, fc2 64) and inputs (ln1, attn 32, ln2, swiglu 48).
  const ActivationBytes a = activation_bytes(m, p, r, tr, ActivationFormula::ptdp);
  EXPECT_EQ(a.weight_grad_dy, 32 * (2 * 64 + 48 + 96) * 2);
  EXPECT_EQ(a.weight_grad_x, 32 * (2 * 64 + 32 + 48) * 2);
}

}  // namespace
}  // namespace ptdp
