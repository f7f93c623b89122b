// The pure parts of running sweeps on clusters: which measured points fit the
// ranks at hand (--max-ranks, SLURM_NTASKS, the local GPUs), the sbatch
// headers a launch shape gives, and point identities.
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/launch/rank_limits.h"
#include "core/launch/slurm_script.h"
#include "core/results/output_files.h"
#include "core/sweep/slurm_folder.h"

namespace ptdp {
namespace {

Config point_of(int tp, int pp, int dp, Device device, Precision precision = Precision::bf16) {
  Config c;
  c.plan.tp = tp;
  c.plan.pp = pp;
  c.plan.dp = dp;
  c.plan.precision = precision;
  c.machine.device = device;
  c.machine.gpus_per_node = 8;
  return c;
}

// Limits spelled positionally: --max-ranks, SLURM_NTASKS, local GPUs, a launcher that spans nodes.
RankLimits limits(std::optional<int> max_ranks, std::optional<int> allocation, int local_gpus = 0, bool spans = false) {
  RankLimits l;
  l.max_ranks = max_ranks;
  l.allocation = allocation;
  l.local_gpus = local_gpus;
  l.spans_nodes = spans;
  return l;
}

void expect_refusal_names(const Config& c, const RankLimits& l, const std::string& limit) {
  const std::string why = measure_refusal(c, l);
  EXPECT_NE(why.find(limit), std::string::npos) << "refusal: \"" << why << "\", expected it to name " << limit;
}

TEST(RankLimits, TheAllocationAndMaxRanksBoundEveryPoint) {
  const Config cpu2 = point_of(1, 2, 1, Device::cpu);
  EXPECT_EQ(measure_refusal(cpu2, RankLimits{}), "");
  expect_refusal_names(cpu2, limits(std::nullopt, 1), "allocation's 1 tasks (SLURM_NTASKS)");
  expect_refusal_names(cpu2, limits(1, std::nullopt), "--max-ranks 1");
  EXPECT_EQ(measure_refusal(cpu2, limits(2, 2)), "");
  const Config gpu16 = point_of(8, 2, 1, Device::cuda);
  expect_refusal_names(gpu16, limits(std::nullopt, 8, 8, true), "SLURM_NTASKS");
  expect_refusal_names(gpu16, limits(8, std::nullopt, 0, true), "--max-ranks 8");
}

TEST(RankLimits, CpuPointsDefaultToEightRanksUnlessAnAllocationSaysMore) {
  const Config cpu16 = point_of(2, 2, 4, Device::cpu);
  expect_refusal_names(cpu16, RankLimits{}, "8 CPU ranks");
  EXPECT_EQ(measure_refusal(cpu16, limits(std::nullopt, 16)), "");
  EXPECT_EQ(measure_refusal(cpu16, limits(16, std::nullopt)), "");
}

TEST(RankLimits, GpuPointsSpanNodesOnlyThroughALauncherThatDoes) {
  const Config gpu16 = point_of(8, 2, 1, Device::cuda);
  expect_refusal_names(gpu16, limits(std::nullopt, std::nullopt, 8), "this machine's 8 GPUs");
  EXPECT_EQ(measure_refusal(gpu16, limits(std::nullopt, std::nullopt, 0, true)), "");
  EXPECT_EQ(measure_refusal(gpu16, limits(std::nullopt, 16, 0, true)), "");
  expect_refusal_names(point_of(1, 1, 1, Device::cuda, Precision::fp32), limits(std::nullopt, std::nullopt, 8, true),
                       "fp32");
}

TEST(RankLimits, SlurmNtasksIsReadAsAPositiveCount) {
  EXPECT_EQ(allocation_ranks("16"), 16);
  EXPECT_EQ(allocation_ranks(nullptr), std::nullopt);
  EXPECT_EQ(allocation_ranks(""), std::nullopt);
  EXPECT_EQ(allocation_ranks("0"), std::nullopt);
  EXPECT_EQ(allocation_ranks("4(x2)"), std::nullopt);
}

TEST(SlurmScript, HeadersComeFromTheLaunchShape) {
  Machine node;
  node.gpus_per_node = 8;
  SlurmJob job{"ptdp-fig13-3", launch_shape(20, node), true, 2100, "/d/point-3.slurm.out", {"what it does"},
               "ptdp sweep-slurm-point s.json --point 3"};
  EXPECT_EQ(sbatch_script(job),
            "#!/bin/bash\n"
            "#SBATCH --job-name=ptdp-fig13-3\n"
            "#SBATCH --nodes=3\n"
            "#SBATCH --ntasks=20\n"
            "#SBATCH --ntasks-per-node=8\n"
            "#SBATCH --gpus-per-node=8\n"
            "#SBATCH --time=0:35:00\n"
            "#SBATCH --output=/d/point-3.slurm.out\n"
            "# what it does\n"
            "exec ptdp sweep-slurm-point s.json --point 3\n");
  job.gpus = false;
  EXPECT_EQ(sbatch_script(job).find("gpus-per-node"), std::string::npos) << "a CPU job asks for no GPUs";
}

TEST(SlurmScript, TimeLimitsRoundUpToWholeMinutes) {
  EXPECT_EQ(slurm_time(0), "0:01:00");
  EXPECT_EQ(slurm_time(61), "0:02:00");
  EXPECT_EQ(slurm_time(3600), "1:00:00");
  EXPECT_EQ(slurm_time(26 * 3600 + 59), "26:01:00");
}

TEST(SlurmScript, SubmitSbatchesEveryJobWithTheGivenOptions) {
  const std::string s = submit_script({"point-0.sbatch", "point-2.sbatch"});
  EXPECT_NE(s.find("\n\"${SBATCH:-sbatch}\" \"$@\" point-0.sbatch\n\"${SBATCH:-sbatch}\" \"$@\" point-2.sbatch\n"),
            std::string::npos) << s;
}

// An emitted job hands its launcher to `ptdp sweep-slurm-point`: a preset must stay a preset.
TEST(SlurmScript, ALaunchersSpecParsesBackToTheSameLauncher) {
  for (const char* spec : {"mpirun", "srun", "wrap -n {ranks} {cmd}"}) {
    const Launcher l = Launcher::parse(spec);
    EXPECT_EQ(l.spec(), spec);
    EXPECT_EQ(Launcher::parse(l.spec()).name(), l.name());
  }
}

TEST(SlurmFolder, IdentityMismatchNamesWhatDiffers) {
  const SweepIdentity here{"fig13", "crc32:00000001", "abc"};
  EXPECT_EQ(identity_mismatch(here, here), "");
  EXPECT_NE(identity_mismatch(here, {"fig13", "crc32:00000002", "abc"}).find("another version of the sweep file"),
            std::string::npos);
  EXPECT_NE(identity_mismatch(here, {"fig13", "crc32:00000001", "def"}).find("another ptdp commit: def"),
            std::string::npos);
  EXPECT_NE(identity_mismatch(here, {"other", "crc32:00000001", "abc"}).find("another sweep: \"other\""),
            std::string::npos);
}

TEST(SlurmFolder, PointFilesReadBackAsWritten) {
  const auto dir = std::filesystem::temp_directory_path() / ("ptdp-slurm-point-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const PointFile p{{"s", "crc32:0000abcd", "c0ffee"}, 3,
                    {ResultMode::measured, Outcome::failed, "exit 1: boom", 2.5, nullptr}};
  write_json_atomic(point_result_path(dir, 3), point_file_json(p));
  const PointFile back = read_point_file(dir / "point-3.json");
  EXPECT_EQ(back.identity.file_hash, "crc32:0000abcd");
  EXPECT_EQ(back.index, 3);
  EXPECT_EQ(back.run.status, Outcome::failed);
  EXPECT_EQ(back.run.reason, "exit 1: boom");
  EXPECT_TRUE(back.run.result.is_null());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ptdp
