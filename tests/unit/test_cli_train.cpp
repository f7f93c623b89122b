// `ptdp train` end to end: the result JSON and its fields, the trace, and
// refused input (exit 2, every field named, no file left behind).
#include <gtest/gtest.h>

#include "core/results/result.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;

// `ptdp train` of the tiny config in `dir` with `options`.
test::Run train_tiny(const ScratchDir& dir, const std::string& options) {
  const auto config = dir.write("tiny.json", test::tiny_config_json().dump());
  return test::run_command(test::ptdp_cli() + " train --config " + config.string() + " " + options, dir);
}

TEST(CliTrain, WritesAMeasuredResultWithFallingLoss) {
  ScratchDir dir("train");
  const auto r = train_tiny(dir, "--iterations 20 --warmup 2 --out r.json --trace t.json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("iter   20/20"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  EXPECT_EQ(j["schema"], "ptdp.result/2");
  EXPECT_EQ(j["mode"], "measured");
  EXPECT_EQ(j["model"]["ffn_hidden"], 256);
  EXPECT_EQ(j["plan"]["global_batch"], 8);
  EXPECT_EQ(j["plan"]["deterministic"], false);  // the switch is recorded with the plan
  EXPECT_FALSE(j["software"]["commit"].get<std::string>().empty());
  const auto& m = j["metrics"];
  ASSERT_EQ(m["loss"].size(), 20u);
  EXPECT_LT(m["loss"][19].get<double>(), m["loss"][0].get<double>() - 0.5);
  EXPECT_EQ(m["iteration_s"]["samples"].size(), 18u);
  EXPECT_GT(m["iteration_s"]["median"].get<double>(), 0);
  EXPECT_GT(m["model_tflops_per_gpu"].get<double>(), 0);
  EXPECT_GT(m["flops_per_iteration"]["model"].get<double>(), 0);
  EXPECT_GT(m["memory_bytes"]["peak_measured"].get<double>(), 0);
  EXPECT_GT(m["memory_bytes"]["model"]["params"].get<double>(), 0);
  EXPECT_GT(m["memory_bytes"]["model"]["activations"].get<double>(), 0);
  // Percent of the profile's fp32 peak (cpu-host: one core's measured sgemm rate).
  const double peak = j["machine"]["peak_tflops"]["fp32"].get<double>();
  EXPECT_DOUBLE_EQ(m["peak_tflops_used"].get<double>(), peak);
  EXPECT_NEAR(m["percent_of_peak"].get<double>(), 100 * m["model_tflops_per_gpu"].get<double>() / peak, 1e-9);
  EXPECT_EQ(m["bubble"]["analytical"], 0.0);
  EXPECT_NEAR(m["bubble"]["simulated"].get<double>(), 0.0, 1e-12);  // p = 1: the replay has no bubble either
  // The same configuration projected beside the measurement, under the same keys.
  const auto& projected = j["projected"]["metrics"];
  EXPECT_GT(projected["iteration_s"]["median"].get<double>(), 0);
  EXPECT_EQ(projected["memory_bytes"]["per_stage"]["model"].size(), 1u);
  EXPECT_EQ(projected["memory_bytes"]["model"], m["memory_bytes"]["model"]);  // one memory model
  // The reader takes the file back whole.
  EXPECT_EQ(to_json(read_result(j)), j);
  const auto trace = nlohmann::json::parse(test::read_file(dir.path() / "t.json"));
  EXPECT_GE(trace["traceEvents"].size(), 8u);  // 4 forwards and 4 backwards at least
}

// A profile whose peak is below what the run did (MFU above 100%) is named,
// as an error on the console and in the result: its percentages are not of
// this machine. (The tests run on the profile's peak: PTDP_MEASURE_PEAK=0.)
TEST(CliTrain, APeakBelowTheMeasuredRateIsAnError) {
  ScratchDir dir("low-peak");
  auto cfg = test::tiny_config_json();
  auto machine = nlohmann::json::parse(test::read_file(std::string(PTDP_SOURCE_DIR) + "/sweeps/machines/cpu-host.json"));
  const auto config_with_peak = [&](double tflops) {
    machine["peak_tflops"]["fp32"] = tflops;
    cfg["machine"] = machine;
    return dir.write("c.json", cfg.dump()).string();
  };
  const std::string run = test::ptdp_cli() + " train --iterations 3 --config ";
  auto r = test::run_command(run + config_with_peak(1e-9) + " --out r.json", dir);  // 1 kFLOP/s: any run is above it
  ASSERT_EQ(r.status, 0) << r.err;  // the losses are sound: the figure drawn from the peak is what is wrong
  EXPECT_NE(r.err.find("ptdp train: error: MFU "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("re-measure it (sweeps/machines/cpu-host.json"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  ASSERT_EQ(j["hardware"]["errors"].size(), 1u) << j["hardware"].dump();
  EXPECT_NE(j["hardware"]["errors"][0].get<std::string>().find("above 100%"), std::string::npos);
  EXPECT_EQ(to_json(read_result(j)), j);
  r = test::run_command(run + config_with_peak(1e6) + " --out s.json", dir);  // an exaFLOP/s core: no error
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("error"), std::string::npos) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(test::read_file(dir.path() / "s.json"))["hardware"].contains("errors"));
}

TEST(CliTrain, HeadsNotDivisibleByTpIsRefusedWithoutOutput) {
  ScratchDir dir("refused");
  auto cfg = test::tiny_config_json();
  cfg["model"]["heads"] = 6;
  cfg["model"]["hidden"] = 96;
  cfg["plan"]["tp"] = 4;
  const auto config = dir.write("bad.json", cfg.dump());
  const auto r = test::run_command(test::ptdp_cli() + " train --config " + config.string() + " --out r.json", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("plan.tp=4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("model.heads=6"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

TEST(CliTrain, ABadLayerSplitIsRefusedWithoutOutput) {
  ScratchDir dir("split");
  auto cfg = test::tiny_config_json();
  cfg["plan"]["layers_per_stage"] = {1, 1, 1};  // three entries for one stage of two layers
  const auto config = dir.write("bad.json", cfg.dump());
  const auto r = test::run_command(test::ptdp_cli() + " train --config " + config.string() + " --out r.json", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("plan.layers_per_stage"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

TEST(CliTrain, MalformedOrUnknownInputExitsTwo) {
  ScratchDir dir("malformed");
  const auto broken = dir.write("broken.json", "{\"model\": {\"layers\": 2,");
  auto r = test::run_command(test::ptdp_cli() + " train --config " + broken.string() + " --out r.json", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
  auto cfg = test::tiny_config_json();
  cfg["plan"]["tensor_paralel"] = 2;
  const auto unknown = dir.write("unknown.json", cfg.dump());
  r = test::run_command(test::ptdp_cli() + " train --config " + unknown.string() + " --out r.json", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("plan.tensor_paralel"), std::string::npos) << r.err;
  r = test::run_command(test::ptdp_cli() + " train --config " + unknown.string() + " --iterations 0", dir);
  EXPECT_EQ(r.status, 2);
  r = test::run_command(test::ptdp_cli() + " train --no-such-option", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

TEST(CliTrain, Bf16OnTheCpuIsRefused) {
  ScratchDir dir("bf16");
  auto cfg = test::tiny_config_json();
  cfg["plan"]["precision"] = "bf16";
  const auto config = dir.write("c.json", cfg.dump());
  const auto r = test::run_command(test::ptdp_cli() + " train --config " + config.string(), dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("plan.precision"), std::string::npos) << r.err;
}

// 16-bit main gradients are a projection of other software's runtime: ptdp's
// own keeps them in fp32 and refuses the plan where the compute type is 16-bit
// (every problem named at once: here beside --device cuda's on a GPU-less host).
TEST(CliTrain, SixteenBitGradientsAreRefusedByTheRuntime) {
  ScratchDir dir("gradprec");
  auto cfg = test::tiny_config_json();
  cfg["plan"]["precision"] = "bf16";
  cfg["plan"]["grad_precision"] = "compute";
  const auto config = dir.write("c.json", cfg.dump());
  const auto r = test::run_command(test::ptdp_cli() + " train --device cuda --config " + config.string(), dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("plan.grad_precision=compute is modelled by `ptdp project` only"), std::string::npos) << r.err;
}

// The distributed optimizer runs; over one data-parallel rank it is warned of, not refused.
TEST(CliTrain, TheDistributedOptimizerOnOneDataParallelRankIsWarnedOf) {
  ScratchDir dir("distopt");
  auto cfg = test::tiny_config_json();
  cfg["plan"]["distributed_optimizer"] = true;
  const auto config = dir.write("c.json", cfg.dump());
  const auto r = test::run_command(test::ptdp_cli() + " train --iterations 2 --config " + config.string(), dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: plan.dp_sharding=optimizer with plan.dp=1"), std::string::npos) << r.err;
}

TEST(CliTrain, TrainsOnATextFileAsBytes) {
  ScratchDir dir("text");
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the quick brown fox jumps over the lazy dog. ";
  const auto data = dir.write("corpus.txt", text);
  auto cfg = test::tiny_config_json();
  cfg["model"]["vocab"] = 256;
  const auto config = dir.write("c.json", cfg.dump());
  const auto r = test::run_command(test::ptdp_cli() + " train --config " + config.string() + " --data " +
                                       data.string() + " --iterations 15 --out r.json",
                                   dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  EXPECT_NE(j["run"]["data"].get<std::string>().find("corpus.txt"), std::string::npos);
  EXPECT_LT(j["metrics"]["loss"][14].get<double>(), j["metrics"]["loss"][0].get<double>());
  cfg["model"]["vocab"] = 128;
  const auto small = dir.write("small.json", cfg.dump());
  const auto refused = test::run_command(
      test::ptdp_cli() + " train --config " + small.string() + " --data " + data.string(), dir);
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("model.vocab"), std::string::npos) << refused.err;
}

// The sweep runner records "oom" from this exit status alone (no log text), so
// running out of memory, the tensor allocator's (oom) or any other host
// allocation's (alloc: std::bad_alloc), must end `ptdp train` with it and write no result.
TEST(CliTrain, OutOfMemoryExitsWithItsOwnStatus) {
  for (const auto& [fault, message] : {std::pair<std::string, std::string>{"oom", "injected out of memory"},
                                       {"alloc", "rank 0: out of host memory (std::bad_alloc)"}}) {
    ScratchDir dir("oom-" + fault);
    const auto r = train_tiny(dir, "--iterations 3 --fault " + fault + ":0:1 --out r.json");
    EXPECT_EQ(r.status, 4) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
  }
}

// A loss that is NaN or infinite ends the run with exit 1 at that iteration,
// naming it, and writes no result: its figures would mean nothing.
TEST(CliTrain, ALossThatIsNoLongerFiniteEndsTheRun) {
  ScratchDir dir("diverged");
  const auto r = train_tiny(dir, "--iterations 4 --fault nan:0:1 --out r.json");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("the loss is nan after iteration 2: training diverged"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("iter    3/4"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

}  // namespace
}  // namespace ptdp
