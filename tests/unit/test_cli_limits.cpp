// Plans that cannot fit are refused before any work (exit 2, the bound or the
// bytes named): `ptdp train` against the device's memory and ptdp's work
// limits, `ptdp project` against the simulator's, `ptdp sweep` against
// --max-points, each within seconds where they used to allocate for minutes.
#include <gtest/gtest.h>

#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;
using test::ScratchDir;

// `ptdp COMMAND --config` of `cfg` (plus `options`), with its wall time.
struct TimedRun {
  test::Run run;
  double seconds = 0;
};
TimedRun run_config(const std::string& command, const json& cfg, const std::string& options = "") {
  ScratchDir dir("limits-" + command);
  const auto file = dir.write("c.json", cfg.dump());
  TimedRun t;
  t.seconds = test::seconds_of([&] {
    t.run = test::run_command(test::ptdp_cli() + " " + command + " --config " + file.string() + " " + options, dir);
  });
  return t;
}

json tiny_with(const std::string& field, long long value) {
  json cfg = test::tiny_config_json();
  cfg["model"][field] = value;
  return cfg;
}

void expect_refused(const TimedRun& t, const std::string& needle) {
  EXPECT_EQ(t.run.status, 2) << t.run.err;
  EXPECT_NE(t.run.err.find(needle), std::string::npos) << t.run.err;
  EXPECT_LT(t.seconds, 10.0);  // before: minutes of allocation, then std::bad_alloc
}

TEST(CliLimits, TrainRefusesAPlanBeyondTheHostsMemoryNamingTheBytes) {
  for (const auto& [field, value] : {std::pair<std::string, long long>{"layers", 1000000}, {"hidden", 1 << 18}}) {
    const TimedRun t = run_config("train", tiny_with(field, value));
    expect_refused(t, "by the memory model");
    EXPECT_NE(t.run.err.find("for the job's one rank (stage 0: parameters"), std::string::npos) << t.run.err;
    EXPECT_NE(t.run.err.find("of this host's memory; --allow-oversubscribe-memory"), std::string::npos) << t.run.err;
    EXPECT_TRUE(t.run.out.empty()) << t.run.out;  // refused before training started
  }
}

TEST(CliLimits, TrainRefusesSizesBeyondWhatTheMemoryModelCounts) {
  json huge = tiny_with("layers", 1 << 20);  // each size within its bound, the product beyond
  huge["model"]["hidden"] = 1 << 18;
  const TimedRun t = run_config("train", huge);
  expect_refused(t, "beyond the 2^62 bytes");
  EXPECT_NE(t.run.err.find("(1 problem)"), std::string::npos) << t.run.err;
  expect_refused(run_config("train", tiny_with("vocab", 2147483647)), "model.vocab=2147483647 padded to a multiple");
}

// The escape skips the check: the plan then runs out of memory in the allocator (4).
TEST(CliLimits, AllowOversubscribeMemoryRunsThePlanAnyway) {
  json cfg = tiny_with("hidden", 1 << 17);
  cfg["model"]["ffn_hidden"] = 1 << 20;  // h·f = 2^37 elements: within the bounds, 512 GiB in fp32
  const TimedRun t = run_config("train", cfg, "--iterations 2 --allow-oversubscribe-memory");
  EXPECT_EQ(t.run.status, 4) << t.run.err;
  EXPECT_NE(t.run.err.find("out of host memory"), std::string::npos) << t.run.err;
}

json gpt_one_gpu_on_a100() {
  return json::parse(R"({
    "model": {"layers": 8, "hidden": 1024, "heads": 16, "seq_len": 1024, "vocab": 51200},
    "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 1, "global_batch": 8, "precision": "bf16"},
    "machine": "a100-80gb"})");
}

TEST(CliLimits, ProjectRefusesMoreInstructionsThanItSimulates) {
  json many_micro_batches = gpt_one_gpu_on_a100();
  many_micro_batches["plan"]["global_batch"] = 1000000;
  const TimedRun m = run_config("project", many_micro_batches);
  expect_refused(m, "6000003 instructions");
  EXPECT_NE(m.run.err.find("more than the 2000000 that ptdp runs or simulates"), std::string::npos) << m.run.err;
  json many_stages = gpt_one_gpu_on_a100();
  many_stages["model"]["layers"] = 100000;
  many_stages["plan"]["pp"] = 100000;
  expect_refused(run_config("project", many_stages), "(kMaxPipelineInstructions)");
}

TEST(CliLimits, SweepRefusesMorePointsThanMaxPointsBeforeExpanding) {
  ScratchDir dir("limits-sweep");
  json s = {{"schema", "ptdp.sweep/1"}, {"name", "huge"}, {"machine", "a100-80gb"}, {"base", gpt_one_gpu_on_a100()}};
  s["base"].erase("machine");
  json seeds = json::array();
  for (int i = 1; i <= 30; ++i) seeds.push_back(i);
  s["axes"] = json::array();
  for (int a = 0; a < 6; ++a) s["axes"].push_back({{"plan.seed", seeds}});  // 30^6 points
  const auto sweep = dir.write("s.json", s.dump());
  test::Run r;
  const double seconds = test::seconds_of(
      [&] { r = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json", dir); });
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("expands to 729000000 points"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than --max-points=5000"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 5.0);  // before: 21 s of expansion, then an abort
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
  s["axes"] = json::array({{{"plan.seed", seeds}}});
  const auto small = dir.write("small.json", s.dump());
  r = test::run_command(test::ptdp_cli() + " sweep " + small.string() + " --out r.json --max-points 29", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("expands to 30 points"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ptdp
