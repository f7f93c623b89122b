// Vocabulary padding (model.vocab_pad_to): the padded size, its validation
// against t, the config round trip, the embedding's shape, and a training step
// whose softmax runs over the padded vocabulary.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/comm/process_groups.h"
#include "core/comm/single_rank.h"
#include "core/config/config.h"
#include "tests/config_test_util.h"
#include "core/data/token_source.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/model/embedding.h"
#include "core/runtime/trainer.h"
#include "tests/cli_test_util.h"
#include "tests/cpu_training_util.h"

namespace ptdp {
namespace {

using nlohmann::json;

Model model_with(int vocab, int pad) {
  Model m{2, 64, 4, 16, vocab, 0, 0};
  m.vocab_pad_to = pad;
  return m;
}

TEST(VocabPadding, PadsUpToAMultipleOfVocabPadTo) {
  EXPECT_EQ(model_with(50257, 128).padded_vocab(), 50304);  // GPT-2's vocabulary, as Megatron pads it
  EXPECT_EQ(model_with(51200, 128).padded_vocab(), 51200);  // the paper's V is already a multiple
  EXPECT_EQ(model_with(128, 128).padded_vocab(), 128);
  EXPECT_EQ(model_with(100, 128).padded_vocab(), 128);
  EXPECT_EQ(model_with(100, 1).padded_vocab(), 100);
  EXPECT_EQ(Model{}.vocab_pad_to, 128);  // the default
}

ConfigErrors problems(int vocab, int pad, int tp) {
  const std::filesystem::path machines = std::filesystem::path(PTDP_SOURCE_DIR) / "sweeps" / "machines";
  json j = json::parse(R"({
    "model": {"layers": 2, "hidden": 64, "heads": 4, "seq_len": 16, "vocab": 128},
    "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 2, "global_batch": 8, "precision": "fp32"},
    "machine": "cpu-host"})");
  j["model"]["vocab"] = vocab;
  j["model"]["vocab_pad_to"] = pad;
  j["plan"]["tp"] = tp;
  return validate(config_from_json(j, machines));
}

bool names(const ConfigErrors& errors, const std::string& field) {
  for (const auto& e : errors)
    if (e.field == field) return true;
  return false;
}

TEST(VocabPadding, ThePaddedVocabularyMustSplitOverT) {
  EXPECT_TRUE(problems(100, 128, 4).empty()) << test::errors_text(problems(100, 128, 4));  // 128 / 4; 100 would not split
  EXPECT_TRUE(names(problems(50257, 128, 5), "model.vocab_pad_to"));  // 50304 % 5 != 0
  EXPECT_TRUE(names(problems(100, 1, 8), "plan.tp"));  // no padding: t must divide model.vocab itself
  EXPECT_TRUE(names(problems(128, 0, 1), "model.vocab_pad_to"));      // must be at least 1
  EXPECT_TRUE(names(problems(128, -3, 1), "model.vocab_pad_to"));
}

TEST(VocabPadding, ConfigsEchoAndReadTheField) {
  const json echoed = to_json(model_with(100, 64));
  EXPECT_EQ(echoed.at("vocab_pad_to"), 64);
  EXPECT_EQ(echoed.at("vocab"), 100);
}

TEST(VocabPadding, TheEmbeddingHoldsThePaddedRowsSplitOverT) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  SingleRankCommunicator tp;
  const Model m = model_with(100, 128);
  const Plan plan;
  ModelContext ctx{ops, tp, m, plan};
  const auto wte = make_word_embedding(ctx);
  EXPECT_EQ(wte->full_shape, (Shape{128, 64}));
  EXPECT_EQ(wte->value.shape(), (Shape{128, 64}));
}

// With weights of std 0.02 the logits are ≈ 0 (std 0.02·√h = 0.16), so the first
// loss is ≈ ln V' + var/2 ≈ ln 128 + 0.013 = 4.865 over the padded vocabulary,
// against ln 100 = 4.605 without the padded columns; 0.1 separates the two.
TEST(VocabPadding, TheSoftmaxRunsOverThePaddedVocabulary) {
  Config cfg;
  cfg.model = model_with(100, 128);
  cfg.plan.micro_batch = 2;
  cfg.plan.global_batch = 4;
  EXPECT_NEAR(test::cpu_train_losses(cfg, 1).at(0), std::log(128.0), 0.1);
}

TEST(VocabPadding, TrainResultsRecordThePaddedVocabulary) {
  test::ScratchDir dir("vocab_padding");
  auto cfg = test::tiny_config_json();
  cfg["model"]["vocab"] = 100;
  const auto config = dir.write("v100.json", cfg.dump());
  const auto r = test::run_command(
      test::ptdp_cli() + " train --config " + config.string() + " --iterations 2 --warmup 0 --out r.json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = json::parse(test::read_file(dir.path() / "r.json"));
  EXPECT_EQ(j["model"]["vocab"], 100);
  EXPECT_EQ(j["model"]["vocab_pad_to"], 128);
  EXPECT_EQ(j["model"]["vocab_padded"], 128);
}

TEST(VocabPadding, ABadVocabPadToIsRefusedNamingTheField) {
  test::ScratchDir dir("vocab_pad_refused");
  auto cfg = test::tiny_config_json();
  cfg["model"]["vocab_pad_to"] = 0;
  const auto config = dir.write("bad.json", cfg.dump());
  const auto r = test::run_command(test::ptdp_cli() + " train --config " + config.string() + " --out r.json", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("model.vocab_pad_to"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ptdp
