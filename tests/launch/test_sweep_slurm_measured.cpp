// Measured CPU sweeps started other ways give the direct sweep's results: through
// a --launcher template, and emitted as Slurm jobs, run with bash in place of
// sbatch inside simulated allocations (a stand-in `srun` first on PATH starts
// the ranks with mpirun) and collected. Compared: what is deterministic (each
// point's key, status and per-iteration losses).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;
using test::ScratchDir;

json tiny_measured_sweep() { return test::tiny_cpu_sweep_json("cpu_slurm"); }

// index -> {key, status, losses}: what two ways of running a point must agree on.
json deterministic_part(const std::filesystem::path& results) {
  json out = json::object();
  const json doc = json::parse(test::read_file(results));
  for (const auto& p : doc["points"])
    out[std::to_string(p["index"].get<int>())] = {{"key", p["key"]}, {"status", p["status"]},
                                                  {"losses", p["result"].is_null() ? json() : p["result"]["metrics"]["loss"]}};
  return out;
}

// The direct sweep through the default launcher, run once for the tests here.
const json& direct_sweep() {
  static const json direct = [] {
    ScratchDir dir("slurm-direct");
    const auto sweep = dir.write("s.json", tiny_measured_sweep().dump());
    const auto r = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json", dir);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    return deterministic_part(dir.path() / "r.json");
  }();
  return direct;
}

TEST(SweepLaunchers, AnMpirunTemplateGivesTheDefaultsResults) {
  ASSERT_EQ(direct_sweep().size(), 2u) << direct_sweep().dump();
  for (const auto& [i, p] : direct_sweep().items()) {
    EXPECT_EQ(p["status"], "ok") << p;
    EXPECT_EQ(p["losses"].size(), 3u) << p;
  }
  ScratchDir dir("slurm-template");
  const auto sweep = dir.write("s.json", tiny_measured_sweep().dump());
  const auto r = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json --launcher '" +
                                       PTDP_MPIRUN + " -np {ranks} {cmd}'", dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(deterministic_part(dir.path() / "r.json"), direct_sweep());
}

// Stands in for srun inside a job: records its arguments, drops its options and
// starts the command as $SLURM_NTASKS ranks under mpirun.
void write_fake_srun(const ScratchDir& dir) {
  std::filesystem::create_directories(dir.path() / "bin");
  const auto srun = dir.write("bin/srun", std::string("#!/bin/sh\necho \"$*\" >> ") + dir.path().string() +
                                              "/srun-calls.txt\n"
                                              "while [ $# -gt 0 ]; do case \"$1\" in --*) shift ;; *) break ;; esac; done\n"
                                              "exec " + PTDP_MPIRUN + " -np \"$SLURM_NTASKS\" \"$@\"\n");
  chmod(srun.c_str(), 0755);
}

// Runs DIR/jobs/point-N.sbatch with bash, in an allocation of the tasks its #SBATCH --ntasks asks for.
void run_job(const ScratchDir& dir, int index) {
  const std::string script = (dir.path() / "jobs" / ("point-" + std::to_string(index) + ".sbatch")).string();
  const std::string text = test::read_file(script);
  const auto at = text.find("#SBATCH --ntasks=");
  ASSERT_NE(at, std::string::npos) << text;
  const int tasks = std::stoi(text.substr(at + 17));
  const auto r = test::run_command("PATH=" + (dir.path() / "bin").string() + ":$PATH SLURM_NTASKS=" +
                                       std::to_string(tasks) + " SLURM_NNODES=1 SLURM_JOB_ID=" + std::to_string(7 + index) +
                                       " bash " + script, dir);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST(SweepSlurmJobs, EmitRunWithBashAndCollectGivesTheDirectSweepsResults) {
  ScratchDir dir("slurm-jobs");
  write_fake_srun(dir);
  const auto sweep = dir.write("s.json", tiny_measured_sweep().dump());
  const std::string collect = test::ptdp_cli() + " sweep " + sweep.string() + " --collect jobs --out r.json";
  const auto emit = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --emit-slurm jobs", dir);
  ASSERT_EQ(emit.status, 0) << emit.err;

  run_job(dir, 1);  // one job done: the other is missing, and a later collect adds it
  EXPECT_EQ(test::run_command(collect, dir).status, 1);
  EXPECT_EQ(deterministic_part(dir.path() / "r.json")["0"]["status"], "missing");
  run_job(dir, 0);
  const auto r = test::run_command(collect, dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(deterministic_part(dir.path() / "r.json"), direct_sweep());
  EXPECT_NE(test::read_file(dir.path() / "srun-calls.txt").find("--nodes=1 --ntasks=2 --ntasks-per-node=2 "),
            std::string::npos) << "the jobs start their ranks through the srun preset";
}

}  // namespace
}  // namespace ptdp
