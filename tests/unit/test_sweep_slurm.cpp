// `ptdp sweep --emit-slurm` and `--collect` without training (their jobs start
// through a launcher that fails at once, run with bash in place of sbatch):
// missing and failed points, idempotent and resumable collection, refused
// folders and mismatched results, and the allocation bounding a direct sweep.
// Emit, run and collect with real training is tests/launch/test_sweep_slurm_measured.cpp.
#include <gtest/gtest.h>

#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;
using test::ScratchDir;

json two_point_slurm_sweep(const std::string& name = "slurm_unit") { return test::tiny_cpu_sweep_json(name); }

test::Run ptdp(const std::string& args, const ScratchDir& dir) { return test::run_command(test::ptdp_cli() + " " + args, dir); }

// Runs DIR/point-N.sbatch with bash inside a simulated allocation of `tasks` tasks.
test::Run run_job(const ScratchDir& dir, const std::string& jobs, int index, int tasks) {
  return test::run_command("SLURM_NTASKS=" + std::to_string(tasks) + " SLURM_JOB_ID=" + std::to_string(100 + index) +
                               " bash " + jobs + "/point-" + std::to_string(index) + ".sbatch",
                           dir);
}

json points_by_index(const std::filesystem::path& results) {
  json by_index = json::object();
  const json doc = json::parse(test::read_file(results));
  for (const auto& p : doc["points"]) by_index[std::to_string(p["index"].get<int>())] = p;
  return by_index;
}

TEST(SweepSlurm, CollectRecordsMissingThenFailedPointsAndIsIdempotent) {
  ScratchDir dir("slurm-collect");
  dir.write("s.json", two_point_slurm_sweep().dump());
  const auto emit = ptdp("sweep s.json --emit-slurm jobs --launcher 'false {cmd}'", dir);
  ASSERT_EQ(emit.status, 0) << emit.err;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "jobs" / "submit.sh"));

  const auto none = ptdp("sweep s.json --collect jobs --out r.json", dir);
  EXPECT_EQ(none.status, 1) << none.err;
  json r = points_by_index(dir.path() / "r.json");
  ASSERT_EQ(r.size(), 2u);
  for (const auto& [i, p] : r.items()) EXPECT_EQ(p["status"], "missing") << p.dump();

  const auto job = run_job(dir, "jobs", 0, 1);
  EXPECT_EQ(job.status, 1) << job.out << job.err;
  EXPECT_EQ(ptdp("sweep s.json --collect jobs --out r.json", dir).status, 1);
  r = points_by_index(dir.path() / "r.json");
  EXPECT_EQ(r["0"]["status"], "failed");
  EXPECT_NE(r["0"]["reason"].get<std::string>().find("exit 1"), std::string::npos) << r["0"].dump();
  EXPECT_EQ(r["1"]["status"], "missing");

  const std::string before = test::read_file(dir.path() / "r.json");
  const auto again = ptdp("sweep s.json --collect jobs --out r.json", dir);
  EXPECT_NE(again.out.find("(unchanged)"), std::string::npos) << again.out;
  EXPECT_EQ(test::read_file(dir.path() / "r.json"), before) << "collecting twice must leave the file as it was";
}

TEST(SweepSlurm, ResultsOfAnotherSweepFileOrCommitAreRecordedNotMerged) {
  ScratchDir dir("slurm-mismatch");
  json s = two_point_slurm_sweep();
  dir.write("s.json", s.dump());
  ASSERT_EQ(ptdp("sweep s.json --emit-slurm jobs --launcher 'false {cmd}'", dir).status, 0);
  ASSERT_EQ(run_job(dir, "jobs", 0, 1).status, 1);
  ASSERT_EQ(run_job(dir, "jobs", 1, 2).status, 1);
  // Point 1's result claims another ptdp build.
  const auto point1 = dir.path() / "jobs" / "point-1.json";
  json p1 = json::parse(test::read_file(point1));
  p1["identity"]["commit"] = "0123456";
  dir.write("jobs/point-1.json", p1.dump());
  const auto other_commit = ptdp("sweep s.json --collect jobs --out r.json", dir);
  EXPECT_EQ(other_commit.status, 2) << other_commit.out;
  json r = points_by_index(dir.path() / "r.json");
  EXPECT_EQ(r["0"]["status"], "failed");
  EXPECT_EQ(r["1"]["status"], "refused");
  EXPECT_NE(r["1"]["reason"].get<std::string>().find("another ptdp commit: 0123456"), std::string::npos) << r["1"];
  // The sweep file edited since the jobs ran: none of their results is merged.
  s["note"] = "edited after the jobs ran";
  dir.write("s.json", s.dump());
  const auto other_file = ptdp("sweep s.json --collect jobs --out r2.json", dir);
  EXPECT_EQ(other_file.status, 2) << other_file.out;
  const json refused = points_by_index(dir.path() / "r2.json");
  for (const auto& [i, p] : refused.items()) {
    EXPECT_EQ(p["status"], "refused");
    EXPECT_NE(p["reason"].get<std::string>().find("another version of the sweep file"), std::string::npos) << p;
    EXPECT_TRUE(p["result"].is_null());
  }
}

TEST(SweepSlurm, AFolderOfAnotherSweepIsRefusedAndLeftAsItWas) {
  ScratchDir dir("slurm-folder");
  dir.write("a.json", two_point_slurm_sweep("sweep_a").dump());
  dir.write("b.json", two_point_slurm_sweep("sweep_b").dump());
  ASSERT_EQ(ptdp("sweep a.json --emit-slurm jobs", dir).status, 0);
  EXPECT_EQ(ptdp("sweep a.json --emit-slurm jobs", dir).status, 0) << "the same sweep rewrites its jobs";
  const std::string manifest = test::read_file(dir.path() / "jobs" / "manifest.json");
  const auto other = ptdp("sweep b.json --emit-slurm jobs", dir);
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(other.err.find("holds the Slurm jobs of sweep \"sweep_a\""), std::string::npos) << other.err;
  EXPECT_EQ(test::read_file(dir.path() / "jobs" / "manifest.json"), manifest);
  const auto collect = ptdp("sweep b.json --collect jobs --out r.json", dir);
  EXPECT_EQ(collect.status, 2);
  EXPECT_NE(collect.err.find("\"sweep_a\""), std::string::npos) << collect.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));

  std::filesystem::create_directories(dir.path() / "busy");
  dir.write("busy/notes.txt", "mine");
  const auto busy = ptdp("sweep a.json --emit-slurm busy", dir);
  EXPECT_EQ(busy.status, 2);
  EXPECT_NE(busy.err.find("is not empty"), std::string::npos) << busy.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "busy" / "manifest.json"));

  const auto both = ptdp("sweep a.json --emit-slurm jobs --collect jobs", dir);
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
}

TEST(SweepSlurm, JobsAskForThePointsShapeAndProjectedPointsAreNotEmitted) {
  ScratchDir dir("slurm-emit");
  json s = two_point_slurm_sweep();
  s["mode"] = "auto";
  s["points"].push_back({{"plan.pp", 2}, {"plan.dp", 2}});  // over --max-ranks: auto projects it
  dir.write("s.json", s.dump());
  const auto emit = ptdp("sweep s.json --emit-slurm jobs --timeout 600 --max-ranks 2", dir);
  ASSERT_EQ(emit.status, 0) << emit.err;
  EXPECT_NE(emit.out.find("1 points are projected, not emitted"), std::string::npos) << emit.out;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "jobs" / "point-2.sbatch"));
  const std::string job = test::read_file(dir.path() / "jobs" / "point-1.sbatch");
  for (const char* line : {"#SBATCH --job-name=ptdp-slurm_unit-1\n", "#SBATCH --nodes=1\n", "#SBATCH --ntasks=2\n",
                           "#SBATCH --ntasks-per-node=2\n", "#SBATCH --time=0:15:00\n",
                           "srun --nodes=1 --ntasks=2 --ntasks-per-node=2 ptdp train"})
    EXPECT_NE(job.find(line), std::string::npos) << line << " not in\n" << job;
  EXPECT_EQ(job.find("gpus-per-node"), std::string::npos);
  // The scripts can be run as ./submit.sh; the manifest is data.
  namespace fs = std::filesystem;
  const auto exec = [](const fs::path& p) { return (fs::status(p).permissions() & fs::perms::owner_exec) != fs::perms::none; };
  EXPECT_TRUE(exec(dir.path() / "jobs" / "submit.sh"));
  EXPECT_TRUE(exec(dir.path() / "jobs" / "point-1.sbatch"));
  EXPECT_FALSE(exec(dir.path() / "jobs" / "manifest.json"));
  const json manifest = json::parse(test::read_file(dir.path() / "jobs" / "manifest.json"));
  EXPECT_EQ(manifest["points"].size(), 2u);
  s["mode"] = "project";
  dir.write("p.json", s.dump());
  const auto projected = ptdp("sweep p.json --emit-slurm jobs2", dir);
  EXPECT_EQ(projected.status, 2);
  EXPECT_NE(projected.err.find("no point to measure"), std::string::npos) << projected.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "jobs2"));
}

// Inside an allocation of one task, the two-rank point is refused naming it, not started.
TEST(SweepSlurm, ADirectSweepRefusesPointsLargerThanTheAllocation) {
  ScratchDir dir("slurm-allocation");
  json s = two_point_slurm_sweep();
  s["points"] = json::array({{{"plan.pp", 2}}});
  dir.write("s.json", s.dump());
  const auto r = test::run_command("SLURM_NTASKS=1 " + test::ptdp_cli() + " sweep s.json --out r.json", dir);
  EXPECT_EQ(r.status, 0) << r.err;
  const json p = points_by_index(dir.path() / "r.json")["0"];
  EXPECT_EQ(p["status"], "refused");
  EXPECT_NE(p["reason"].get<std::string>().find("allocation's 1 tasks (SLURM_NTASKS)"), std::string::npos) << p;
  const auto capped = ptdp("sweep s.json --out r2.json --max-ranks 1", dir);
  EXPECT_NE(points_by_index(dir.path() / "r2.json")["0"]["reason"].get<std::string>().find("--max-ranks 1"),
            std::string::npos);
}

}  // namespace
}  // namespace ptdp
