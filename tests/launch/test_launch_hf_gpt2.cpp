// `ptdp train --export-hf` under mpirun: four ranks (t = 2, p = 2) gather to
// rank 0 the weights one rank trains, and write the same check loss; with
// --iterations 0 (no step) the initial weights, bit for bit, and a step-0 save.
#include <gtest/gtest.h>

#include <cmath>

#include "core/checkpoint/hf_gpt2_export.h"
#include "core/checkpoint/safetensors.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;

// tiny (l 4, b 1), Adam's eps 1e-6 as the equivalence tests' (gradients that
// are zero but for summation noise move no weight by O(lr)), with `plan`.
std::filesystem::path hf_launch_config(const ScratchDir& dir, const std::string& name, const nlohmann::json& plan) {
  auto cfg = test::tiny_config_json();
  cfg["model"]["layers"] = 4;
  cfg["plan"]["micro_batch"] = 1;
  cfg["plan"].update(plan);
  cfg["optimizer"]["eps"] = 1e-6;
  return dir.write(name, cfg.dump());
}

TEST(LaunchHfGpt2, FourRanksExportTheSingleRankWeights) {
  ScratchDir dir("launch-hf");
  const std::string train = test::ptdp_cli() + " train --iterations 2 --warmup 0 --config ";
  const auto a = test::run_command(train + hf_launch_config(dir, "one.json", nlohmann::json::object()).string() + " --export-hf one", dir);
  ASSERT_EQ(a.status, 0) << a.err;
  const auto b = test::run_command(std::string(PTDP_MPIRUN) + " -np 4 " + train +
                                       hf_launch_config(dir, "many.json", {{"tp", 2}, {"pp", 2}}).string() +
                                       " --export-hf many",
                                   dir);
  ASSERT_EQ(b.status, 0) << b.err;
  const auto check = [&](const char* d) {
    return nlohmann::json::parse(test::read_file(dir.path() / d / kHfCheckFile))["loss"].get<double>();
  };
  EXPECT_NEAR(check("many"), check("one"), 1e-5 * check("one"));
  const SafetensorsFile one(dir.path() / "one" / kHfWeightsFile), many(dir.path() / "many" / kHfWeightsFile);
  ASSERT_EQ(one.entries().size(), many.entries().size());
  for (const auto& [name, entry] : one.entries()) {
    ASSERT_EQ(many.entry(name).shape, entry.shape) << name;
    const std::vector<float> x = one.read_f32(name), y = many.read_f32(name);
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(double{x[i]} - double{y[i]}));
    EXPECT_LE(worst, 1e-5) << name;
  }
}

// The initial weights do not depend on the layout (Philox by element of the
// full parameter), so four ranks' --iterations 0 export is one rank's, byte for byte.
TEST(LaunchHfGpt2, FourRanksExportTheInitialWeightsWithoutAStep) {
  ScratchDir dir("launch-hf-initial");
  const std::string train = test::ptdp_cli() + " train --iterations 0 --config ";
  const auto a = test::run_command(train + hf_launch_config(dir, "one.json", nlohmann::json::object()).string() +
                                       " --export-hf one",
                                   dir);
  ASSERT_EQ(a.status, 0) << a.err;
  const auto b = test::run_command(std::string(PTDP_MPIRUN) + " -np 4 " + train +
                                       hf_launch_config(dir, "many.json", {{"tp", 2}, {"pp", 2}}).string() +
                                       " --export-hf many --save ck",
                                   dir);
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path() / "ck" / "iter_0000000" / "manifest.json"));
  for (const char* f : {kHfWeightsFile, kHfCheckFile})
    EXPECT_EQ(test::read_file(dir.path() / "many" / f), test::read_file(dir.path() / "one" / f)) << f;
}

}  // namespace
}  // namespace ptdp
