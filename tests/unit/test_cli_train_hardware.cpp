// `ptdp train` on the machine at hand: a config without "machine" trains on
// the CPU's profile and records what was detected; a named profile that
// contradicts the hardware is a warning and a field, never a refusal; the
// result carries every rank's place and figures; a bad --fault slow is refused.
#include <gtest/gtest.h>

#include "core/results/result.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;

test::Run train(const ScratchDir& dir, const nlohmann::json& cfg, const std::string& options) {
  const auto config = dir.write("c.json", cfg.dump());
  return test::run_command(test::ptdp_cli() + " train --config " + config.string() + " --iterations 3 " + options, dir);
}

TEST(CliTrainHardware, AConfigWithoutMachineTrainsOnTheCpuHostProfile) {
  ScratchDir dir("at-hand");
  auto cfg = test::tiny_config_json();
  cfg.erase("machine");
  const auto r = train(dir, cfg, "--out r.json --trace t.json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  EXPECT_EQ(j["machine"]["name"], "cpu-host");
  EXPECT_EQ(j["machine"]["gpus_per_node"], 1);  // the ranks on this host
  const auto& hw = j["hardware"];
  EXPECT_EQ(hw["profile_chosen"], "detected");
  EXPECT_EQ(hw["profile"], "cpu-host");
  EXPECT_EQ(hw["device"], "cpu");
  EXPECT_FALSE(hw["name"].get<std::string>().empty());
  EXPECT_GT(hw["cores"].get<int>(), 0);
  EXPECT_TRUE(hw["mismatch"].empty());
  // Every measured result: each rank's place and own figures.
  ASSERT_EQ(j["ranks"].size(), 1u);
  const auto& rank = j["ranks"][0];
  EXPECT_FALSE(rank["host"].get<std::string>().empty());
  EXPECT_EQ(rank["local_rank"], 0);
  EXPECT_EQ(rank["iteration_s"].size(), 2u);  // after the one warm-up iteration
  EXPECT_GT(rank["compute_s"].get<double>(), 0);
  EXPECT_EQ(to_json(read_result(j)), j);
  const auto trace = nlohmann::json::parse(test::read_file(dir.path() / "t.json"));
  bool named = false;
  for (const auto& e : trace["traceEvents"])
    if (e["name"] == "thread_name")
      named = e["args"]["name"] == "rank 0 (t0 d0 p0) @ " + rank["host"].get<std::string>();
  EXPECT_TRUE(named) << trace.dump();
  // Only `ptdp train` takes the machine at hand: a projection needs a named one.
  const auto p = test::run_command(test::ptdp_cli() + " project --config " + (dir.path() / "c.json").string(), dir);
  EXPECT_EQ(p.status, 2);
  EXPECT_NE(p.err.find("machine is missing"), std::string::npos) << p.err;
}

TEST(CliTrainHardware, AProfileThatContradictsTheHardwareIsWarnedOfAndRecorded) {
  ScratchDir dir("mismatch");
  auto cfg = test::tiny_config_json();
  cfg["machine"] = "h100-80gb";
  const auto r = train(dir, cfg, "--out r.json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: machine profile 'h100-80gb' describes a cuda machine"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  EXPECT_EQ(j["hardware"]["profile_chosen"], "named");
  ASSERT_EQ(j["hardware"]["mismatch"].size(), 1u);
  EXPECT_NE(j["hardware"]["mismatch"][0].get<std::string>().find("h100-80gb"), std::string::npos);
}

TEST(CliTrainHardware, ABadSlowFaultIsRefused) {
  ScratchDir dir("bad-slow");
  for (const std::string fault : {"slow:0:0.5", "slow:0:x", "slow:1:2", "slow:-1:2", "slow:0:nan"}) {
    const auto r = train(dir, test::tiny_config_json(), "--fault " + fault + " --out r.json");
    EXPECT_EQ(r.status, 2) << fault;
    EXPECT_NE(r.err.find("--fault"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
  }
}

}  // namespace
}  // namespace ptdp
