// `ptdp sweep --mode auto` on the CPU: points this machine can hold are
// measured (`ptdp train`, under mpirun when they need several ranks), the same
// sweep projected sits beside them, and a measured point that dies or runs out
// of memory is recorded.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;

json cpu_sweep() {
  json s = test::tiny_cpu_sweep_json("cpu_test");
  s["mode"] = "auto";
  s["points"].push_back({{"plan.tp", 2}, {"plan.dp", 2}});
  return s;
}

TEST(SweepMeasured, AutoMeasuresCpuPointsAndProjectionSitsBeside) {
  test::ScratchDir dir("sweep-measured");
  const auto sweep = dir.write("s.json", cpu_sweep().dump());
  const auto m = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out measured.json", dir);
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  const json measured = json::parse(test::read_file(dir.path() / "measured.json"));
  ASSERT_EQ(measured["points"].size(), 3u);
  for (const auto& p : measured["points"]) {
    EXPECT_EQ(p["mode"], "measured") << p.dump();
    EXPECT_EQ(p["status"], "ok") << p.dump();
    EXPECT_EQ(p["result"]["mode"], "measured");
    EXPECT_EQ(p["result"]["run"]["ranks"], p["result"]["plan"]["tp"].get<int>() * p["result"]["plan"]["pp"].get<int>() *
                                               p["result"]["plan"]["dp"].get<int>());
  }
  const auto p = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --mode project --out projected.json", dir);
  ASSERT_EQ(p.status, 0) << p.out << p.err;
  const json projected = json::parse(test::read_file(dir.path() / "projected.json"));
  for (const auto& q : projected["points"]) {
    EXPECT_EQ(q["mode"], "projected");
    EXPECT_EQ(q["status"], "ok") << q.dump();
  }
}

// Runs the sweep with `testing_aid` striking point 1: the sweep exits 1, point 1
// is recorded with `status` and the others are measured.
void expect_point_1_recorded_as(const std::string& testing_aid, const std::string& status) {
  test::ScratchDir dir("sweep-" + status);
  const auto sweep = dir.write("s.json", cpu_sweep().dump());
  const auto r = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json " + testing_aid, dir);
  EXPECT_EQ(r.status, 1);
  const json j = json::parse(test::read_file(dir.path() / "r.json"));
  ASSERT_EQ(j["points"].size(), 3u);
  for (const auto& p : j["points"]) EXPECT_EQ(p["status"], p["index"] == 1 ? status : "ok") << p.dump();
}

TEST(SweepMeasured, AMeasuredPointThatDiesIsRecorded) { expect_point_1_recorded_as("--crash-point 1", "failed"); }

// The runner tells out-of-memory by the exit status alone: here rank 1 of the
// two-rank point runs out, and mpirun passes its status on.
TEST(SweepMeasured, AMultiRankPointOutOfMemoryIsRecordedAsOom) { expect_point_1_recorded_as("--oom-point 1", "oom"); }

// Interrupted or killed while a two-rank point trains, the runner leaves neither
// mpirun nor a rank behind (Open MPI puts each rank in a process group of its
// own; killed, the runner relies on the SIGTERM the kernel sends its child).
void expect_no_rank_left_after(int sig) {
  test::ScratchDir dir("sweep-signal-" + std::to_string(sig));
  json s = cpu_sweep();
  s["points"] = json::array({{{"plan.pp", 2}}});
  s["train"]["iterations"] = 1000000;
  const auto sweep = dir.write("s.json", s.dump());
  const std::string marker = dir.path().string();
  const pid_t pid = test::start_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out " + marker + "/r.json",
                                        dir, "log.txt");
  // mpirun and its two ranks, whose command lines name the point's config in the scratch folder.
  ASSERT_TRUE(test::wait_until([&] { return test::processes_mentioning("train --config " + marker).size() >= 3; }, 60))
      << test::read_file(dir.path() / "log.txt");
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << test::read_file(dir.path() / "log.txt");
  EXPECT_TRUE(test::wait_until([&] { return test::processes_mentioning(marker).empty(); }, 20))
      << test::processes_mentioning(marker).size() << " processes left";
  for (pid_t left : test::processes_mentioning(marker)) kill(left, SIGKILL);
}

TEST(SweepMeasured, AnInterruptedSweepLeavesNoRankBehind) { expect_no_rank_left_after(SIGTERM); }

TEST(SweepMeasured, AKilledSweepLeavesNoRankBehind) { expect_no_rank_left_after(SIGKILL); }

}  // namespace
}  // namespace ptdp
