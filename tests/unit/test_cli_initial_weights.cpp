// `ptdp train --iterations 0` and `optimizer.lr 0`: the initial weights written
// without a step (saved as step 0, exported as a Hugging Face folder), the same
// weights an lr of 0 leaves after its steps; what --iterations 0 refuses
// (exit 2, the option named, nothing written).
#include <gtest/gtest.h>

#include "core/checkpoint/hf_gpt2_export.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;
namespace fs = std::filesystem;

// The tiny GPT, with `lr`, trained in `dir` with `options`.
test::Run train_tiny(const ScratchDir& dir, const std::string& options, double lr = 1e-3) {
  nlohmann::json config = test::tiny_config_json();
  config["optimizer"]["lr"] = lr;
  const auto file = dir.write("tiny_lr.json", config.dump());
  return test::run_command(test::ptdp_cli() + " train --config " + file.string() + " --warmup 0 " + options, dir);
}

std::vector<double> losses(const ScratchDir& dir, const std::string& result) {
  return nlohmann::json::parse(test::read_file(dir.path() / result))["metrics"]["loss"].get<std::vector<double>>();
}

std::string weights(const ScratchDir& dir, const std::string& export_dir) {
  return test::read_file(dir.path() / export_dir / kHfWeightsFile);
}

// --iterations 0 runs no step; its export equals what two steps at lr 0 leave,
// and differs from one step at the default lr.
TEST(CliInitialWeights, IterationsZeroExportsWhatLrZeroLeaves) {
  ScratchDir dir("initial-export");
  const auto zero = train_tiny(dir, "--iterations 0 --export-hf initial");
  ASSERT_EQ(zero.status, 0) << zero.err;
  EXPECT_EQ(zero.out.find("iter "), std::string::npos) << zero.out;  // no step reported
  EXPECT_NE(zero.out.find("written to initial"), std::string::npos) << zero.out;
  const auto still = train_tiny(dir, "--iterations 2 --export-hf lr0 --out lr0.json", 0.0);
  ASSERT_EQ(still.status, 0) << still.err;
  const auto moved = train_tiny(dir, "--iterations 1 --export-hf lr1");
  ASSERT_EQ(moved.status, 0) << moved.err;
  ASSERT_FALSE(weights(dir, "initial").empty());
  EXPECT_EQ(weights(dir, "initial"), weights(dir, "lr0"));
  EXPECT_NE(weights(dir, "initial"), weights(dir, "lr1"));
  // The check file's loss on a fixed batch: the same weights give the same loss.
  EXPECT_EQ(test::read_file(dir.path() / "initial" / kHfCheckFile), test::read_file(dir.path() / "lr0" / kHfCheckFile));
  const auto result = nlohmann::json::parse(test::read_file(dir.path() / "lr0.json"));
  EXPECT_EQ(result["optimizer"]["lr"].get<double>(), 0.0);  // the result says how it was obtained
}

// --iterations 0 --save writes step 0: `ptdp export` of it gives the weights
// --export-hf wrote, and a run loaded from it has the losses of a run from
// scratch, bit for bit.
TEST(CliInitialWeights, IterationsZeroSavesStepZero) {
  ScratchDir dir("initial-save");
  const auto zero = train_tiny(dir, "--iterations 0 --save ck --export-hf initial");
  ASSERT_EQ(zero.status, 0) << zero.err;
  const auto exported = test::run_command(test::ptdp_cli() + " export --load ck --out from_ck", dir);
  ASSERT_EQ(exported.status, 0) << exported.err;
  EXPECT_EQ(weights(dir, "from_ck"), weights(dir, "initial"));
  EXPECT_TRUE(fs::is_regular_file(dir.path() / "ck" / "iter_0000000" / "manifest.json"));
  const auto manifest = nlohmann::json::parse(test::read_file(dir.path() / "ck" / "iter_0000000" / "manifest.json"));
  EXPECT_EQ(manifest["step"], 0);
  EXPECT_EQ(manifest["adamw_steps"], 0);
  ASSERT_EQ(train_tiny(dir, "--iterations 3 --out scratch.json").status, 0);
  const auto loaded = train_tiny(dir, "--iterations 3 --load ck --out loaded.json");
  ASSERT_EQ(loaded.status, 0) << loaded.err;
  EXPECT_EQ(losses(dir, "loaded.json"), losses(dir, "scratch.json"));
}

// Nothing to write, or a result with nothing measured: refused before any work.
TEST(CliInitialWeights, IterationsZeroRefusesWhatItCannotWrite) {
  ScratchDir dir("initial-refused");
  struct Case {
    std::string options, named;
  };
  for (const Case& c : {Case{"--iterations 0", "--iterations: --iterations=0 runs no step"},
                        Case{"--iterations 0 --export-hf hf --out r.json", "--out: --out has nothing to record"},
                        Case{"--iterations 0 --save ck --trace t.json", "--trace: --trace has nothing to record"}}) {
    const auto r = train_tiny(dir, c.options);
    EXPECT_EQ(r.status, 2) << c.options << "\n" << r.err;
    EXPECT_NE(r.err.find(c.named), std::string::npos) << c.options << "\n" << r.err;
  }
  for (const char* f : {"hf", "r.json", "ck", "t.json"}) EXPECT_FALSE(fs::exists(dir.path() / f)) << f;
}

// lr 0 is the lowest: below it is refused, naming the field.
TEST(CliInitialWeights, ANegativeLrIsRefused) {
  ScratchDir dir("lr-negative");
  const auto r = train_tiny(dir, "--iterations 1 --out r.json", -1e-3);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("optimizer.lr=-0.001 must be in [0, 1]"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "r.json"));
}

}  // namespace
}  // namespace ptdp
