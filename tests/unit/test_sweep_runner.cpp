// `ptdp sweep` end to end: points in their own processes, results written as
// they finish, resume after a kill without losing or repeating a point, a
// crashing point recorded while the rest finish, acceptance bands, refusals.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <thread>

#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;
using test::ScratchDir;

// Six projected points of a small GPT on the A100 profile.
json six_points() {
  return json::parse(R"js({
    "schema": "ptdp.sweep/1", "name": "six", "reproduces": "test sweep", "machine": "a100-80gb", "mode": "project",
    "base": {"model": {"layers": 8, "hidden": 2048, "heads": 16, "seq_len": 2048, "vocab": 51200},
             "plan": {"tp": 2, "pp": 2, "dp": 1, "micro_batch": 1, "global_batch": 8, "precision": "bf16"}},
    "axes": [{"plan.global_batch": [8, 16, 32]}, {"plan.recompute": ["none", "full"]}],
    "paper": {"series": "recompute {plan.recompute}", "label": "{plan.global_batch}"}})js");
}

// Names under `dir` (recursively) that look like a temporary output file.
std::vector<std::string> leftover_temporaries(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path().string());
  return out;
}

json results(const ScratchDir& dir) { return json::parse(test::read_file(dir.path() / "r.json")); }

std::map<std::string, int> key_counts(const json& r) {
  std::map<std::string, int> counts;
  for (const auto& p : r["points"]) ++counts[p["key"].get<std::string>()];
  return counts;
}

TEST(SweepRunner, RunsEveryPointAndWritesTheResults) {
  ScratchDir dir("runner");
  const auto sweep = dir.write("s.json", six_points().dump());
  const auto r = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json --jobs 2", dir);
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("[6/6]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ETA"), std::string::npos);
  const json j = results(dir);
  EXPECT_EQ(j["schema"], "ptdp.sweep-results/1");
  EXPECT_EQ(j["sweep"]["name"], "six");
  ASSERT_EQ(j["points"].size(), 6u);
  for (const auto& p : j["points"]) {
    EXPECT_EQ(p["status"], "ok");
    EXPECT_EQ(p["mode"], "projected");
    EXPECT_GT(p["value"].get<double>(), 0);
    EXPECT_EQ(p["result"]["mode"], "projected");
  }
  // The points' outcome files were only handed over: their logs stay, nothing else.
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / ".r.work"))
    EXPECT_EQ(e.path().extension(), ".log") << e.path();
  EXPECT_EQ(leftover_temporaries(dir.path()), std::vector<std::string>{});
  // A rerun finds everything done and runs nothing.
  const auto again = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json", dir);
  EXPECT_EQ(again.status, 0);
  EXPECT_NE(again.out.find("6 already done, 0 to run"), std::string::npos) << again.out;
  EXPECT_EQ(results(dir)["points"].size(), 6u);
}

TEST(SweepRunner, ResumesAfterAKillWithEveryPointExactlyOnce) {
  ScratchDir dir("resume");
  const auto sweep = dir.write("s.json", six_points().dump());
  const pid_t pid =
      test::start_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json --point-delay-ms 400", dir,
                          "first.txt");
  // Wait until two points are on disk, then kill the runner mid-sweep.
  for (int i = 0; i < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (std::filesystem::exists(dir.path() / "r.json") && results(dir)["points"].size() >= 2) break;
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  const std::size_t before = results(dir)["points"].size();
  ASSERT_GE(before, 2u);
  ASSERT_LT(before, 6u) << "the sweep finished before it could be killed";
  const auto r = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(std::to_string(before) + " already done"), std::string::npos) << r.out;
  const auto counts = key_counts(results(dir));
  EXPECT_EQ(counts.size(), 6u);
  for (const auto& [key, n] : counts) EXPECT_EQ(n, 1) << key;
}

// Runs the six points with `testing_aid` striking point 2: the sweep exits 1,
// point 2 is recorded with `status` and a reason holding `reason`, the rest ok.
void expect_point_2_recorded_as(const std::string& testing_aid, const std::string& status, const std::string& reason) {
  ScratchDir dir("point-2-" + status);
  const auto sweep = dir.write("s.json", six_points().dump());
  const auto r = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json " + testing_aid, dir);
  EXPECT_EQ(r.status, 1) << r.out;
  const json j = results(dir);
  ASSERT_EQ(j["points"].size(), 6u);
  for (const auto& p : j["points"]) {
    EXPECT_EQ(p["status"], p["index"] == 2 ? status : "ok") << p.dump();
    if (p["index"] != 2) continue;
    EXPECT_NE(p["reason"].get<std::string>().find(reason), std::string::npos) << p["reason"];
    EXPECT_TRUE(p["value"].is_null());
  }
}

TEST(SweepRunner, ACrashingPointIsRecordedAndTheRestFinish) { expect_point_2_recorded_as("--crash-point 2", "failed", "signal"); }

// The runner tells out-of-memory by the point's exit status: a projection that
// meets std::bad_alloc ends with 4 and is recorded as oom.
TEST(SweepRunner, APointOutOfHostMemoryIsRecordedAsOom) { expect_point_2_recorded_as("--oom-point 2", "oom", "exit 4"); }

// Killed (SIGKILL: the kernel sends its points SIGTERM) or interrupted
// (SIGTERM: it ends them first), the runner leaves none of its points'
// processes behind, and ends by that signal.
void expect_no_point_left_after(int sig) {
  ScratchDir dir("signal-" + std::to_string(sig));
  const auto sweep = dir.write("s.json", six_points().dump());
  const pid_t pid = test::start_command(test::ptdp_cli() + " sweep " + sweep.string() +
                                            " --out r.json --jobs 2 --point-delay-ms 60000", dir, "log.txt");
  const std::string point = "sweep-point " + sweep.string();
  ASSERT_TRUE(test::wait_until([&] { return test::processes_mentioning(point).size() == 2; }, 20));
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << test::read_file(dir.path() / "log.txt");
  EXPECT_TRUE(test::wait_until([&] { return test::processes_mentioning(dir.path().string()).empty(); }, 5))
      << test::processes_mentioning(dir.path().string()).size() << " processes left";
  for (pid_t left : test::processes_mentioning(dir.path().string())) kill(left, SIGKILL);
}

TEST(SweepRunner, InterruptedItEndsItsPointsFirst) {
  expect_no_point_left_after(SIGTERM);
  expect_no_point_left_after(SIGINT);
}

TEST(SweepRunner, KilledItLeavesNoPointBehind) { expect_no_point_left_after(SIGKILL); }

TEST(SweepRunner, AcceptanceBandsFailAPointBelowItsMinimum) {
  ScratchDir dir("accept");
  json s = six_points();
  s["expect"] = {{"model_tflops_per_gpu", {{"min", 1.0}}}};
  s["points"] = json::array({json::object(), {{"expect", {{"model_tflops_per_gpu", {{"min", 1e6}}}}}}});
  const auto sweep = dir.write("s.json", s.dump());
  const auto r = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json", dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  int pass = 0, fail = 0;
  const json j = results(dir);
  for (const auto& p : j["points"]) (p["acceptance"] == "pass" ? pass : fail)++;
  EXPECT_EQ(pass, 6);
  EXPECT_EQ(fail, 6);
  s.erase("points");
  const auto lenient = dir.write("ok.json", s.dump());
  EXPECT_EQ(test::run_command(test::ptdp_cli() + " sweep " + lenient.string() + " --out ok-results.json", dir).status, 0);
}

TEST(SweepRunner, MalformedSweepIsRefusedAndNothingRuns) {
  ScratchDir dir("malformed-sweep");
  json s = six_points();
  s["axes"].push_back({{"plan.no_such_field", {1, 2}}});
  const auto sweep = dir.write("s.json", s.dump());
  const auto r = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("plan.no_such_field"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

// Once every point was "refused" and the sweep exited 0.
TEST(SweepRunner, AnUnknownMachineRefusesTheSweepNamingIt) {
  ScratchDir dir("unknown-machine");
  json s = six_points();
  s["machine"] = "tpu-v9";
  const auto r = test::run_command(test::ptdp_cli() + " sweep " + dir.write("s.json", s.dump()).string() +
                                       " --out r.json", dir);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.err.find("machine \"tpu-v9\" is not known"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

// Once results/../../x.json: a file outside results/.
TEST(SweepRunner, ANameThatIsNotAFileNameIsRefused) {
  ScratchDir dir("sweep-name");
  json s = six_points();
  s["name"] = "../../x";
  std::filesystem::create_directories(dir.path() / "a" / "b");
  const auto sweep = dir.write("s.json", s.dump());
  const auto r = test::run_command("cd a/b && " + test::ptdp_cli() + " sweep " + sweep.string(), dir);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.err.find("name: must be a file name"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "a" / "x.json"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "a" / "b" / "results"));
}

TEST(SweepRunner, InvalidPointsAreRecordedAsRefusedAndOthersRun) {
  ScratchDir dir("refused-points");
  json s = six_points();
  s["axes"] = json::array({{{"plan.tp", {2, 3}}}});
  const auto sweep = dir.write("s.json", s.dump());
  const auto r = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json", dir);
  EXPECT_EQ(r.status, 0) << r.err;
  const json j = results(dir);
  ASSERT_EQ(j["points"].size(), 2u);
  for (const auto& p : j["points"]) {  // recorded in the order they finish
    if (p["index"] == 0) {
      EXPECT_EQ(p["status"], "ok");
    }
    if (p["index"] != 1) continue;
    EXPECT_EQ(p["status"], "refused");
    EXPECT_NE(p.value("reason", "").find("plan.tp"), std::string::npos) << p.dump();
  }
}

TEST(SweepRunner, ResultsOfAnotherSweepAreNotOverwritten) {
  ScratchDir dir("other");
  dir.write("r.json", json({{"schema", "ptdp.sweep-results/1"}, {"sweep", {{"name", "else"}}}, {"points", json::array()}}).dump());
  const auto sweep = dir.write("s.json", six_points().dump());
  const auto r = test::run_command(test::ptdp_cli() + " sweep " + sweep.string() + " --out r.json", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("\"else\""), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ptdp
