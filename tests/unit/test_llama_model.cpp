// The Llama block on one rank: endtoend/configs/tiny-llama.json is the block of
// tests/equivalence_config.h, its parameters are the ones the block has (no
// position table, no biases, an output weight of its own, kv of g heads,
// SwiGLU's [gate; up]), and it learns.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/comm/single_rank.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/model/rank_model.h"
#include "tests/cpu_training_util.h"
#include "tests/equivalence_config.h"

namespace ptdp {
namespace {

Config tiny_llama() {
  return load_config(std::filesystem::path(PTDP_SOURCE_DIR) / "endtoend/configs/tiny-llama.json",
                     default_machines_dir());
}

TEST(LlamaModel, ConfigFileIsTheTestBlock) {
  const Model m = tiny_llama().model;
  Model want = m;
  test::use_llama_block(want);
  EXPECT_EQ(m.kv(), want.kv());
  EXPECT_EQ(m.ffn(), want.ffn());
  EXPECT_EQ(m.norm, want.norm);
  EXPECT_EQ(m.activation, want.activation);
  EXPECT_EQ(m.position, want.position);
  EXPECT_EQ(m.bias, want.bias);
  EXPECT_EQ(m.tied_embeddings, want.tied_embeddings);
}

TEST(LlamaModel, HoldsTheParametersOfTheBlock) {
  const Config cfg = tiny_llama();
  const Model& m = cfg.model;
  CpuAllocator alloc;
  CpuOps ops(alloc);
  SingleRankCommunicator tp;
  ModelContext ctx{ops, tp, m, cfg.plan};
  RankModel model(ctx, 0);
  const std::int64_t h = m.hidden, f = m.ffn(), v = m.padded_vocab(), kv = 2 * m.kv() * m.head_dim();
  // wte and output (V', h); per layer: ln1 (h), q (h, h), kv (2·g·d, h), proj (h, h),
  // ln2 (h), fc1 (2, f, h), fc2 (h, f); final norm (h).
  const std::int64_t layer = h + h * h + kv * h + h * h + h + 2 * f * h + h * f;
  EXPECT_EQ(model.num_parameters(), 2 * v * h + m.layers * layer + h);
  std::set<std::string> names;
  for (const Param* p : model.params()) names.insert(p->name);
  for (const char* absent : {"embedding.wpe", "layers.0.q.bias", "layers.0.ln1.bias", "final_ln.bias"})
    EXPECT_EQ(names.count(absent), 0u) << absent;
  for (const char* present : {"output.weight", "layers.0.kv.weight", "layers.3.fc1.weight"})
    EXPECT_EQ(names.count(present), 1u) << present;
  EXPECT_EQ(model.tied_word(), nullptr);
}

TEST(LlamaModel, TinyLlamaLearnsTheSyntheticStream) {
  const auto losses = test::cpu_train_losses(tiny_llama(), 30);
  EXPECT_NEAR(losses.front(), std::log(128.0), 0.1);  // near-uniform predictions first
  double last5 = 0;
  for (std::size_t i = losses.size() - 5; i < losses.size(); ++i) last5 += losses[i] / 5;
  EXPECT_LT(last5, losses.front() - 1.0) << "last five losses average " << last5;
}

}  // namespace
}  // namespace ptdp
