// Nothing a sweep file or an option holds becomes code in what `ptdp sweep`
// runs or emits (issue 30): values with `$(...)`, backticks and `;` stay inert
// when the emitted jobs run with bash under a stand-in sbatch and srun, and in
// a direct sweep's launcher line (a marker file the injected command would
// create never appears); values a script cannot hold are refused (exit 2,
// naming the option) before anything is written; the emit folder's entries
// are never written through a planted link; and the script writer itself
// refuses any value that would add a line or split a header.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>

#include "core/launch/slurm_script.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::ScratchDir;

// `$(...)`, backticks, `;`, `|` and `&&`, each creating injected-TAG-N where it runs
// (the scratch folder or its jobs folder; a value that becomes a file name holds no '/').
std::string injections(const std::string& tag) {
  const std::string m = "injected-" + tag + "-";
  return "$(touch " + m + "1) `touch " + m + "2` ; touch " + m + "3 | touch " + m + "4 && touch " + m + "5";
}

std::vector<std::string> markers(const ScratchDir& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::recursive_directory_iterator(dir.path()))
    if (e.path().filename().string().rfind("injected-", 0) == 0) found.push_back(e.path().string());
  return found;
}

// Stand-ins first on PATH: `srun` and `sbatch` record their arguments and exit 1 and 0.
std::string stand_in_path(const ScratchDir& dir) {
  fs::create_directories(dir.path() / "bin");
  for (const auto& [name, status] : {std::pair{"srun", 1}, {"sbatch", 0}}) {
    const auto file = dir.write(std::string("bin/") + name, "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " +
                                                                (dir.path() / name).string() + "-calls.txt\nexit " +
                                                                std::to_string(status) + "\n");
    chmod(file.c_str(), 0755);
  }
  return "PATH=" + (dir.path() / "bin").string() + ":$PATH ";
}

test::Run run_ptdp(const std::string& args, const ScratchDir& dir) {
  return test::run_command(test::ptdp_cli() + " " + args, dir);
}

TEST(SlurmInjection, LabelsSeriesAndTheSweepPathStayInertWhenTheJobsRun) {
  ScratchDir dir("slurm-inert");
  json s = test::tiny_cpu_sweep_json("slurm_inert");
  s["paper"]["label"] = "t{plan.tp} " + injections("label");
  s["paper"]["series"] = injections("series");
  const std::string file = "s " + injections("file") + ".json";
  std::ofstream(dir.path() / file) << s.dump();
  const std::string path = stand_in_path(dir);
  const auto emit = run_ptdp("sweep '" + file + "' --emit-slurm jobs", dir);
  ASSERT_EQ(emit.status, 0) << emit.err;
  for (int i = 0; i < 2; ++i) {
    const std::string job = "jobs/point-" + std::to_string(i) + ".sbatch";
    const auto r = test::run_command(path + "SLURM_NTASKS=2 SLURM_JOB_ID=4" + std::to_string(i) + " bash " + job, dir);
    EXPECT_EQ(r.status, 1) << job << ": the stand-in srun fails the point\n" << r.out << r.err;
    const json point = json::parse(test::read_file(dir.path() / "jobs" / ("point-" + std::to_string(i) + ".json")));
    EXPECT_EQ(point["status"], "failed") << point;  // the job read the sweep file at its odd path
  }
  const auto submit = test::run_command(path + "sh jobs/submit.sh --partition=x", dir);
  EXPECT_EQ(submit.status, 0) << submit.err;
  EXPECT_EQ(test::read_file(dir.path() / "sbatch-calls.txt"),
            "--partition=x point-0.sbatch\n--partition=x point-1.sbatch\n");
  EXPECT_NE(test::read_file(dir.path() / "srun-calls.txt").find(" train --config "), std::string::npos);
  EXPECT_EQ(markers(dir), std::vector<std::string>{}) << "an injected command ran";
}

// A direct sweep's launcher line: every path in {cmd} is quoted, so the shell that starts it runs nothing else.
TEST(SlurmInjection, TheLauncherLineOfADirectSweepQuotesEveryValue) {
  ScratchDir dir("slurm-inert-launcher");
  dir.write("s.json", test::tiny_cpu_sweep_json("inert_launcher").dump());
  const std::string out = "r " + injections("out") + ".json";
  const auto r = run_ptdp("sweep s.json --out '" + out + "' --launcher 'false {cmd}'", dir);
  EXPECT_EQ(r.status, 1) << "both points fail through `false`\n" << r.out << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / out)) << r.err;
  EXPECT_EQ(markers(dir), std::vector<std::string>{}) << "an injected command ran";
}

TEST(SlurmInjection, AFolderOrLauncherAScriptCannotHoldIsRefusedWithNothingWritten) {
  ScratchDir dir("slurm-refused-values");
  dir.write("s.json", test::tiny_cpu_sweep_json("refused_values").dump());
  struct Case {
    std::string options, named, message;
  };
  const std::vector<Case> cases = {
      {"--emit-slurm 'jobs $(touch injected-1)'", "--emit-slurm: --emit-slurm \"", "holds ' ' (0x20) at byte"},
      {"--emit-slurm \"$(printf 'jobs\\ntouch injected-2')\"", "--emit-slurm: --emit-slurm \"", "holds 0x0a at byte"},
      {"--emit-slurm 'jobs;touch injected-3'", "--emit-slurm: --emit-slurm \"", "holds ';' (0x3b)"},
      {"--emit-slurm 'jobs`touch injected-4`'", "--emit-slurm: --emit-slurm \"", "holds '`' (0x60)"},
      {"--emit-slurm 'jobs%j'", "--emit-slurm: --emit-slurm \"", "holds '%' (0x25)"},
      {"--emit-slurm jobs --launcher \"$(printf 'srun {cmd}\\ntouch injected-5')\"", "--launcher: launcher template",
       "holds a control character (0x0a) at byte 10"},
      {"--emit-slurm jobs --launcher 'sh -c \"{cmd}\"'", "--launcher: launcher template",
       "{cmd} at 7 is inside double quotes"},
  };
  for (const auto& c : cases) {
    const auto r = run_ptdp("sweep s.json " + c.options, dir);
    EXPECT_EQ(r.status, 2) << c.options << "\n" << r.err;
    EXPECT_NE(r.err.find(c.named), std::string::npos) << c.options << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.options << "\n" << r.err;
  }
  const std::string odd = "s\ntouch injected-6.json";
  std::ofstream(dir.path() / odd) << test::tiny_cpu_sweep_json("refused_values").dump();
  const auto file = run_ptdp("sweep \"$(printf 's\\ntouch injected-6.json')\" --emit-slurm jobs", dir);
  EXPECT_EQ(file.status, 2) << file.err;
  EXPECT_NE(file.err.find("FILE: FILE \""), std::string::npos) << file.err;
  EXPECT_NE(file.err.find("holds a control character (0x0a) at byte"), std::string::npos) << file.err;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir.path()))
    if (e.path().filename() != "s.json" && e.path().filename() != odd && e.path().extension() != ".txt")
      left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{}) << "a refused emit wrote something";
}

TEST(SlurmInjection, AnEmitFoldersEntriesAreNeverWrittenThroughAPlantedLink) {
  ScratchDir dir("slurm-planted");
  dir.write("s.json", test::tiny_cpu_sweep_json("planted").dump());
  ASSERT_EQ(run_ptdp("sweep s.json --emit-slurm jobs --launcher 'false {cmd}'", dir).status, 0);
  const auto victim = dir.write("victim.txt", "mine");
  const auto jobs = dir.path() / "jobs";
  dir.write("jobs/point-0.sbatch", "an older job");
  const std::string manifest = test::read_file(jobs / "manifest.json");
  fs::remove(jobs / "point-1.sbatch");
  fs::create_symlink(victim, jobs / "point-1.sbatch");
  const auto again = run_ptdp("sweep s.json --emit-slurm jobs --launcher 'false {cmd}'", dir);
  EXPECT_EQ(again.status, 2) << again.err;
  EXPECT_NE(again.err.find("point-1.sbatch is a symbolic link; an output replaces only a regular file"),
            std::string::npos) << again.err;
  EXPECT_EQ(test::read_file(victim), "mine");
  EXPECT_TRUE(fs::is_symlink(jobs / "point-1.sbatch"));
  EXPECT_EQ(test::read_file(jobs / "point-0.sbatch"), "an older job") << "all or none: nothing was replaced";
  EXPECT_EQ(test::read_file(jobs / "manifest.json"), manifest);

  // The job's own log: a link planted there is not opened, so its target keeps its bytes.
  fs::create_symlink(victim, jobs / "point-1-run.log");
  fs::remove(jobs / "point-1.sbatch");
  ASSERT_EQ(run_ptdp("sweep s.json --emit-slurm jobs --launcher 'false {cmd}'", dir).status, 0);
  const auto job = test::run_command("SLURM_NTASKS=2 bash jobs/point-1.sbatch", dir);
  EXPECT_EQ(job.status, 1) << job.err;
  EXPECT_EQ(test::read_file(victim), "mine");
}

SlurmJob safe_job() {
  Machine node;
  node.gpus_per_node = 8;
  return {"ptdp-s-1", launch_shape(2, node), false, 60, "/d/point-1.slurm.out", {"a note"}, "ptdp x"};
}

// The refusal of `job` by sbatch_script, or "" when it was written.
std::string script_refusal(const SlurmJob& job) {
  try {
    (void)sbatch_script(job);
  } catch (const SlurmScriptRefused& e) {
    return e.what();
  }
  return "";
}

TEST(SlurmScript, RefusesAnyValueThatWouldAddALineOrSplitAHeader) {
  EXPECT_EQ(script_refusal(safe_job()), "");
  const auto refused = [](auto change, const std::string& message) {
    SlurmJob job = safe_job();
    change(job);
    const std::string why = script_refusal(job);
    EXPECT_NE(why.find(message), std::string::npos) << "refusal: \"" << why << "\", expected " << message;
  };
  refused([](SlurmJob& j) { j.name = "a b"; }, "Slurm job --job-name \"a b\": holds ' ' (0x20) at byte 1");
  refused([](SlurmJob& j) { j.name = "a\nexec evil"; }, "--job-name \"a\\nexec evil\": holds 0x0a at byte 1");
  refused([](SlurmJob& j) { j.name = ""; }, "--job-name \"\": an #SBATCH value is 1 to 4096 bytes");
  refused([](SlurmJob& j) { j.name = std::string(4097, 'a'); }, "an #SBATCH value is 1 to 4096 bytes");
  refused([](SlurmJob& j) { j.output = "/d/%j.out"; }, "--output \"/d/%j.out\": holds '%' (0x25)");
  refused([](SlurmJob& j) { j.output = "/d/\"x\".out"; }, "holds '\"' (0x22)");
  refused([](SlurmJob& j) { j.notes.push_back("ok\nexec evil"); },
          "note \"ok\\nexec evil\": holds a control character");
  refused([](SlurmJob& j) { j.command = "ptdp x\nevil"; }, "command \"ptdp x\\nevil\": holds a control character");
  refused([](SlurmJob& j) { j.time_limit_s = std::nan(""); }, "a time limit is 0 to 2592000 s");
  refused([](SlurmJob& j) { j.time_limit_s = 1e300; }, "a time limit is 0 to 2592000 s");
  refused([](SlurmJob& j) { j.time_limit_s = -1; }, "a time limit is 0 to 2592000 s");
  EXPECT_THROW(submit_script({"point-0.sbatch", "x\nevil"}), SlurmScriptRefused);
  EXPECT_EQ(sbatch_value_problem("/a-b_c.d/e+f,g:h=i@j~k/0.out"), "");
}

}  // namespace
}  // namespace ptdp
