// `ptdp train` on the machine at hand: a config without "machine" trains on
// the CPU's profile and records what was detected; a named profile that
// contradicts the hardware is a warning and a field, never a refusal; the
// result carries every rank's place and figures, and where its peak came from
// (measured here and cached, or the profile's); a bad --fault slow is refused.
#include <gtest/gtest.h>

#include "core/config/peak_cache.h"
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

// Tests run with PTDP_MEASURE_PEAK=0 (cli_test_util.h's run_command): here it is
// turned on, with the cache in the scratch folder. Timing-free: the result's
// peak is whatever was measured, and every figure drawn from it uses it.
TEST(CliTrainHardware, OnTheCpuTheMeasuredPeakIsUsedAndCached) {
  ScratchDir dir("measured-peak");
  const std::string env = "PTDP_MEASURE_PEAK=1 XDG_CACHE_HOME=" + (dir.path() / "cache").string() + " ";
  auto cfg = test::tiny_config_json();
  cfg.erase("machine");
  const auto config = dir.write("c.json", cfg.dump());
  const auto train_measured = [&](const std::string& out) {
    return test::run_command(env + test::ptdp_cli() + " train --config " + config.string() + " --iterations 3 --out " +
                                 out, dir);
  };
  auto r = train_measured("a.json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto a = nlohmann::json::parse(test::read_file(dir.path() / "a.json"));
  const auto& peak = a["hardware"]["peak"];
  ASSERT_EQ(peak["from"], "measured") << a["hardware"].dump();
  EXPECT_EQ(peak["cpu"], a["hardware"]["name"]);
  EXPECT_FALSE(peak["cached"].get<bool>());
  const double tflops = peak["fp32_tflops"].get<double>();
  EXPECT_GT(tflops, 0);
  EXPECT_EQ(a["machine"]["peak_tflops"]["fp32"], tflops);
  EXPECT_EQ(a["machine"]["memory_bandwidth_gbs"], peak["bandwidth_gbs"]);
  EXPECT_EQ(a["metrics"]["peak_tflops_used"], tflops);
  EXPECT_EQ(a["metrics"]["peak_source"].get<std::string>().rfind("measured: ", 0), 0u);
  EXPECT_DOUBLE_EQ(a["metrics"]["percent_of_peak"].get<double>(),
                   100 * a["metrics"]["model_tflops_per_gpu"].get<double>() / tflops);
  const auto file = peak_cache_file(dir.path() / "cache" / "ptdp", peak["cpu"].get<std::string>(),
                                    peak["cores"].get<int>(), peak["blas_threads"].get<int>());
  ASSERT_TRUE(std::filesystem::exists(file));
  // The second run reads the first one's figures.
  r = train_measured("b.json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto b = nlohmann::json::parse(test::read_file(dir.path() / "b.json"));
  EXPECT_TRUE(b["hardware"]["peak"]["cached"].get<bool>());
  EXPECT_EQ(b["hardware"]["peak"]["fp32_tflops"], tflops);
  // A malformed cache is ignored with a warning, and the peak measured again.
  dir.write(std::filesystem::relative(file, dir.path()).string(), "{\"cpu\": 3}");
  r = train_measured("c.json.out");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: the cached CPU peak is ignored"), std::string::npos) << r.err;
  EXPECT_EQ(a["hardware"]["mismatch"].size(), 0u);
}

TEST(CliTrainHardware, WithoutMeasuringTheResultNamesTheProfilesCpu) {
  ScratchDir dir("profile-peak");
  const auto r = train(dir, test::tiny_config_json(), "--out r.json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  EXPECT_EQ(j["hardware"]["peak"],
            (nlohmann::json{{"from", "profile"}, {"profile", "cpu-host"}, {"measured_on", "AMD EPYC"}}));
  EXPECT_EQ(j["metrics"]["peak_tflops_used"], 0.09);  // the profile's, whatever this machine does
  const auto bad = test::run_command("PTDP_MEASURE_PEAK=yes " + test::ptdp_cli() + " train --config " +
                                         (dir.path() / "c.json").string() + " --out s.json", dir);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("PTDP_MEASURE_PEAK"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "s.json"));
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
