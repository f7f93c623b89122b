// `ptdp train` under mpirun: an 8-rank 3D-parallel run reproduces the single-rank
// losses and reports its bubble and trace, so does a sequence-parallel run; refused input is reported once; a
// dead or silent rank ends the whole job with a non-zero status within 60 s; a
// rank out of memory ends it at once with the out-of-memory status; a rank
// stopped while the job starts ends it after the communication timeout.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;

std::string mpirun(int ranks) { return std::string(PTDP_MPIRUN) + " -np " + std::to_string(ranks) + " "; }

nlohmann::json tiny4() {
  auto cfg = test::tiny_config_json();
  cfg["model"]["layers"] = 4;
  cfg["plan"]["micro_batch"] = 1;
  return cfg;
}

// Trains tiny4() on one rank (a.json) and `plan` on `ranks` ranks (b.json, with
// a trace) for 5 iterations, expects the same losses; returns b.json.
nlohmann::json expect_single_rank_losses(const ScratchDir& dir, const nlohmann::json& plan, int ranks) {
  const auto one = dir.write("one.json", tiny4().dump());
  auto cfg = tiny4();
  cfg["plan"].update(plan);
  const auto many = dir.write("many.json", cfg.dump());
  const auto a = test::run_command(test::ptdp_cli() + " train --config " + one.string() + " --iterations 5 --out a.json", dir);
  EXPECT_EQ(a.status, 0) << a.err;
  const auto b = test::run_command(mpirun(ranks) + test::ptdp_cli() + " train --config " + many.string() +
                                       " --iterations 5 --out b.json --trace trace.json",
                                   dir);
  EXPECT_EQ(b.status, 0) << b.err;
  if (a.status != 0 || b.status != 0) return {};
  const auto ra = nlohmann::json::parse(test::read_file(dir.path() / "a.json"));
  const auto rb = nlohmann::json::parse(test::read_file(dir.path() / "b.json"));
  for (int i = 0; i < 5; ++i) {
    const double x = ra["metrics"]["loss"][i], y = rb["metrics"]["loss"][i];
    EXPECT_NEAR(y, x, 1e-5 * std::abs(x)) << "iteration " << i;
  }
  return rb;
}

TEST(Launch, EightRanksInterleavedReproduceTheSingleRankLosses) {
  ScratchDir dir("launch8");
  const auto rb = expect_single_rank_losses(
      dir, {{"tp", 2}, {"pp", 2}, {"dp", 2}, {"virtual_stages", 2}, {"schedule", "interleaved"}, {"scatter_gather", true}},
      8);
  ASSERT_FALSE(rb.is_null());
  const auto& bubble = rb["metrics"]["bubble"];
  EXPECT_DOUBLE_EQ(bubble["analytical"].get<double>(), 1.0 / (2 * 4));  // (p−1)/(v·m), m = 8/(1·2)
  EXPECT_GE(bubble["measured"].get<double>(), 0.0);
  EXPECT_EQ(bubble["per_rank"]["measured"].size(), 8u);
  EXPECT_EQ(rb["run"]["ranks"], 8);
  EXPECT_EQ(rb["metrics"]["memory_bytes"]["per_rank"]["measured"].size(), 8u);
  EXPECT_GT(rb["metrics"]["communication"]["tp_bytes"].get<double>(), 0);
  EXPECT_GT(rb["metrics"]["communication"]["pp_bytes"].get<double>(), 0);
  EXPECT_GT(rb["metrics"]["communication"]["dp_bytes"].get<double>(), 0);
  const auto trace = nlohmann::json::parse(test::read_file(dir.path() / "trace.json"));
  std::set<int> ranks;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") ranks.insert(e["tid"].get<int>());
  EXPECT_EQ(ranks.size(), 8u);
}

// Sequence parallelism runs under `ptdp train` (it was refused as projection-only).
TEST(Launch, FourRanksSequenceParallelReproduceTheSingleRankLosses) {
  ScratchDir dir("launch-sp");
  const auto rb = expect_single_rank_losses(dir, {{"tp", 2}, {"pp", 2}, {"sequence_parallel", true}}, 4);
  ASSERT_FALSE(rb.is_null());
  EXPECT_TRUE(rb["plan"]["sequence_parallel"].get<bool>());
  EXPECT_GT(rb["metrics"]["communication"]["tp_bytes"].get<double>(), 0);
}

TEST(Launch, WrongRankCountIsRefusedOnceByRankZero) {
  ScratchDir dir("refuse");
  auto cfg = tiny4();
  cfg["plan"].update({{"tp", 2}, {"pp", 2}, {"dp", 2}});
  const auto config = dir.write("c.json", cfg.dump());
  const auto r = test::run_command(mpirun(4) + test::ptdp_cli() + " train --config " + config.string() + " --out r.json", dir);
  EXPECT_EQ(r.status, 2) << r.err;
  const std::string needle = "does not equal the number of processes (4)";
  const auto first = r.err.find(needle);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(needle, first + 1), std::string::npos) << "printed more than once:\n" << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

// A 2-stage run of 50 iterations in which `fault` strikes rank 1 at iteration 2.
struct FaultyRun {
  test::Run run;
  double seconds = 0;
  bool wrote_result = false;
};

FaultyRun run_with_fault(const std::string& name, const std::string& extra) {
  ScratchDir dir(name);
  auto cfg = tiny4();
  cfg["plan"]["pp"] = 2;
  const auto config = dir.write("c.json", cfg.dump());
  FaultyRun f;
  f.seconds = test::seconds_of([&] {
    f.run = test::run_command(mpirun(2) + test::ptdp_cli() + " train --config " + config.string() +
                                  " --iterations 50 --out r.json " + extra,
                              dir);
  });
  f.wrote_result = std::filesystem::exists(dir.path() / "r.json");
  return f;
}

TEST(Launch, AKilledRankEndsTheJobWithinAMinute) {
  const FaultyRun f = run_with_fault("kill", "--fault kill:1:2");
  EXPECT_NE(f.run.status, 0);
  EXPECT_LT(f.seconds, 60.0);
  EXPECT_FALSE(f.wrote_result);
}

TEST(Launch, ASilentRankEndsTheJobAfterTheTimeout) {
  const FaultyRun f = run_with_fault("hang", "--fault hang:1:2 --comm-timeout 5");
  EXPECT_NE(f.run.status, 0);
  EXPECT_GE(f.seconds, 5.0);
  EXPECT_LT(f.seconds, 60.0);
  EXPECT_NE(f.run.err.find("did not complete within 5 s"), std::string::npos) << f.run.err;
  EXPECT_FALSE(f.wrote_result);
}

// Open MPI's mpirun ends the job with the status of the first rank to exit
// non-zero, so the sweep runner sees out-of-memory (4) from a multi-rank run.
// The other rank is ended by mpirun, not by its communication timeout.
TEST(Launch, ARankOutOfMemoryEndsTheJobWithTheOutOfMemoryStatus) {
  const FaultyRun f = run_with_fault("oom", "--fault oom:1:1 --comm-timeout 20");
  EXPECT_EQ(f.run.status, 4) << f.run.err;
  EXPECT_LT(f.seconds, 20.0);
  EXPECT_NE(f.run.err.find("ptdp train: rank 1: injected out of memory"), std::string::npos) << f.run.err;
  EXPECT_FALSE(f.wrote_result);
}

// Rank 1 stops (SIGSTOP) before it reaches MPI_Init, so rank 0 waits inside
// MPI_Init, where no communication deadline applies: the start-up watchdog
// ends rank 0 after --comm-timeout and mpirun then ends the job.
TEST(Launch, ARankStoppedDuringStartUpEndsTheJobWithinTheTimeout) {
  ScratchDir dir("startup");
  auto cfg = tiny4();
  cfg["plan"]["pp"] = 2;
  const auto config = dir.write("c.json", cfg.dump());
  const auto stop = dir.write("stop1.sh", "#!/bin/sh\nif [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then kill -STOP $$; fi\nexec \"$@\"\n");
  std::filesystem::permissions(stop, std::filesystem::perms::owner_all);
  test::Run r;
  const double seconds = test::seconds_of([&] {
    r = test::run_command("timeout 60 " + mpirun(2) + stop.string() + " " + test::ptdp_cli() + " train --config " +
                              config.string() + " --iterations 2 --comm-timeout 3 --out r.json",
                          dir);
  });
  EXPECT_EQ(r.status, 3) << r.err;  // the watchdog's, passed on by mpirun (timeout's would be 124)
  EXPECT_GE(seconds, 3.0);
  EXPECT_LT(seconds, 30.0);
  EXPECT_NE(r.err.find("rank 0 ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("start-up (MPI_Init and a first barrier of all ranks) did not finish within 3 s"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

}  // namespace
}  // namespace ptdp
