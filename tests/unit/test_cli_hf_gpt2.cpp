// `ptdp train --export-hf` and `--init-hf` end to end: an export holds the
// Hugging Face folder and the check file, a run started from it has the
// check's loss as its first loss, and a config.json of another model is
// refused (exit 2, the field named, nothing written).
#include <gtest/gtest.h>

#include "core/checkpoint/hf_gpt2_export.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;

// The tiny GPT with one micro-batch of 2 a step: iteration 1's batch is the check's.
test::Run train_hf(const ScratchDir& dir, const std::string& options) {
  nlohmann::json config = test::tiny_config_json();
  config["plan"]["global_batch"] = 2;
  const auto file = dir.write("tiny_b2.json", config.dump());
  return test::run_command(test::ptdp_cli() + " train --config " + file.string() + " --warmup 0 " + options, dir);
}

double first_loss(const ScratchDir& dir, const std::string& result) {
  return nlohmann::json::parse(test::read_file(dir.path() / result))["metrics"]["loss"][0].get<double>();
}

TEST(CliHfGpt2, AnImportStartsFromTheExportedWeights) {
  ScratchDir dir("hf-cli");
  const auto a = train_hf(dir, "--iterations 3 --out a.json --export-hf hf");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.out.find("written to hf"), std::string::npos) << a.out;
  for (const char* f : {kHfConfigFile, kHfWeightsFile, kHfCheckFile})
    EXPECT_TRUE(std::filesystem::is_regular_file(dir.path() / "hf" / f)) << f;
  const auto check = nlohmann::json::parse(test::read_file(dir.path() / "hf" / kHfCheckFile));
  EXPECT_FALSE(check.contains("loss_as_trained"));  // V = 128 needs no padding
  const double exported = check["loss"].get<double>();
  const auto b = train_hf(dir, "--iterations 1 --out b.json --init-hf hf");
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NEAR(first_loss(dir, "b.json"), exported, 1e-5 * exported);
  EXPECT_LT(exported, first_loss(dir, "a.json") - 0.05);  // three steps trained, not the seeded start
}

// `ptdp export --load`: a checkpoint saved by a 2-iteration run exports the
// same weights (its fp32 masters) as that run's own --export-hf, bit for bit;
// a folder without a checkpoint is refused (exit 2, --load named, nothing written).
TEST(CliHfGpt2, ACheckpointExportsWhatTheRunExported) {
  ScratchDir dir("hf-cli-export");
  const auto a = train_hf(dir, "--iterations 2 --export-hf direct --save ckpt");
  ASSERT_EQ(a.status, 0) << a.err;
  const auto e = test::run_command(test::ptdp_cli() + " export --load ckpt --format hf-gpt2 --out from_ckpt", dir);
  ASSERT_EQ(e.status, 0) << e.err;
  for (const char* f : {kHfWeightsFile, kHfCheckFile})
    EXPECT_EQ(test::read_file(dir.path() / "from_ckpt" / f), test::read_file(dir.path() / "direct" / f)) << f;
  const auto bad = test::run_command(test::ptdp_cli() + " export --load direct --out nothing", dir);
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_NE(bad.err.find("--load"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "nothing"));
}

TEST(CliHfGpt2, AConfigOfAnotherModelIsRefused) {
  ScratchDir dir("hf-cli-refused");
  ASSERT_EQ(train_hf(dir, "--iterations 1 --export-hf hf").status, 0);
  auto config = nlohmann::json::parse(test::read_file(dir.path() / "hf" / kHfConfigFile));
  config["n_embd"] = 128;
  config["activation_function"] = "relu";
  dir.write("hf/config.json", config.dump());
  const auto r = train_hf(dir, "--iterations 1 --out r.json --init-hf hf");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("config.json: n_embd"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("model.hidden=64"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("activation_function"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

// A block GPT-2 does not have: --export-hf, --init-hf and `ptdp export` of its
// checkpoint are refused (exit 2) naming the model's fields.
TEST(CliHfGpt2, TheLlamaBlockIsRefused) {
  ScratchDir dir("hf-cli-llama");
  const std::string train = test::ptdp_cli() + " train --config " + PTDP_SOURCE_DIR +
                            "/endtoend/configs/tiny-llama.json --warmup 0 --iterations 1 ";
  for (const char* option : {"--export-hf hf", "--init-hf hf"}) {
    std::filesystem::create_directories(dir.path() / (option[2] == 'i' ? "hf" : "unused"));  // --init-hf's must exist
    const auto r = test::run_command(train + option, dir);
    EXPECT_EQ(r.status, 2) << r.err;
    for (const char* field : {"model.kv_heads", "model.norm", "model.activation", "model.position", "model.bias",
                              "model.tied_embeddings"})
      EXPECT_NE(r.err.find(field), std::string::npos) << option << ": " << r.err;
  }
  ASSERT_EQ(test::run_command(train + "--save ckpt", dir).status, 0);
  const auto e = test::run_command(test::ptdp_cli() + " export --load ckpt --format hf-gpt2 --out out", dir);
  EXPECT_EQ(e.status, 2) << e.err;
  EXPECT_NE(e.err.find("model.activation"), std::string::npos) << e.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));
}

}  // namespace
}  // namespace ptdp
