// The one step runner (core/process/step_runner.h): a step that exits 0,
// fails, is killed by a signal or at its time limit, runs out of memory
// (exit 4), is refused (exit 2) or is skipped is recorded as such, from its
// exit status and result file alone; steps run up to `jobs` at once, an
// exclusive one alone; an interrupt ends the running ones. The outcome names
// keep the spellings results files use.
#include <gtest/gtest.h>

#include <atomic>

#include "core/process/outcome.h"
#include "core/process/step_runner.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

// A step running `script` under /bin/sh in `dir`, its result file out-NAME.json.
Step shell_step(const ScratchDir& dir, const std::string& name, const std::string& script, double limit_s = 20) {
  const std::string at = "cd '" + dir.path().string() + "' && ";
  return {name, {"/bin/sh", "-c", at + script}, dir.path() / (name + ".log"), dir.path() / ("out-" + name + ".json"),
          limit_s, nullptr, false, std::nullopt};
}

TEST(Outcome, KeepsTheSpellingsResultsFilesUse) {
  const std::vector<std::string> names = {"ok", "failed", "timeout", "oom", "skipped", "refused", "does_not_fit",
                                          "missing"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(to_string(static_cast<Outcome>(i)), names[i]);
    EXPECT_EQ(outcome_from_string(names[i]), static_cast<Outcome>(i));
  }
  EXPECT_EQ(outcome_from_string("garbled"), Outcome::failed);
}

TEST(Outcome, IsReadFromTheExitStatus) {
  EXPECT_EQ(outcome_of_exit(0), Outcome::ok);
  EXPECT_EQ(outcome_of_exit(1), Outcome::failed);
  EXPECT_EQ(outcome_of_exit(2), Outcome::refused);
  EXPECT_EQ(outcome_of_exit(3), Outcome::failed);  // MPI_Abort
  EXPECT_EQ(outcome_of_exit(4), Outcome::oom);
  EXPECT_EQ(outcome_of_exit(128 + 9), Outcome::failed);
  for (const Outcome o : {Outcome::failed, Outcome::timeout, Outcome::oom}) EXPECT_TRUE(is_failure(o));
  for (const Outcome o : {Outcome::ok, Outcome::skipped, Outcome::refused, Outcome::does_not_fit, Outcome::missing})
    EXPECT_FALSE(is_failure(o));
}

TEST(StepRunner, AStepThatExitsZeroIsOkWithWhatItsReaderTook) {
  ScratchDir dir("step-ok");
  Step s = shell_step(dir, "ok", "echo '{\"x\": 1}' > out-ok.json");
  s.read = [](const fs::path& output, StepRun& run) { run.result = nlohmann::json::parse(test::read_file(output)); };
  const StepRun run = run_step(s);
  EXPECT_EQ(run.outcome, Outcome::ok) << run.reason;
  EXPECT_EQ(run.reason, "");
  EXPECT_EQ(run.result["x"], 1);
}

TEST(StepRunner, AFailingStepIsFailedWithItsExitStatusAndLastLines) {
  ScratchDir dir("step-failed");
  const StepRun run = run_step(shell_step(dir, "failed", "echo one; echo; echo boom; exit 1"));
  EXPECT_EQ(run.outcome, Outcome::failed);
  EXPECT_EQ(run.reason, "exit 1: one | boom");
  EXPECT_TRUE(run.result.is_null());
}

TEST(StepRunner, AStepKilledByASignalFailedNamingIt) {
  ScratchDir dir("step-signal");
  const StepRun run = run_step(shell_step(dir, "signal", "kill -9 $$"));
  EXPECT_EQ(run.outcome, Outcome::failed);
  EXPECT_EQ(run.reason.rfind("killed by signal 9", 0), 0u) << run.reason;
}

TEST(StepRunner, AStepPastItsTimeLimitIsEndedAsTimeout) {
  ScratchDir dir("step-timeout");
  const auto t0 = std::chrono::steady_clock::now();
  const StepRun run = run_step(shell_step(dir, "timeout", "sleep 30", 1));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  EXPECT_EQ(run.outcome, Outcome::timeout);
  EXPECT_EQ(run.reason, "no result within 1 s");
  EXPECT_GE(run.seconds, 1);
}

TEST(StepRunner, ExitFourIsOutOfMemoryAndExitTwoRefused) {
  ScratchDir dir("step-oom");
  const StepRun oom = run_step(shell_step(dir, "oom", "echo 'out of memory'; exit 4"));
  EXPECT_EQ(oom.outcome, Outcome::oom);
  EXPECT_EQ(oom.reason, "exit 4: out of memory");
  const StepRun refused = run_step(shell_step(dir, "refused", "echo 'plan.tp: must divide'; exit 2"));
  EXPECT_EQ(refused.outcome, Outcome::refused);
  EXPECT_EQ(refused.reason, "exit 2: plan.tp: must divide");
}

TEST(StepRunner, ASkippedStepNeverStarts) {
  ScratchDir dir("step-skipped");
  Step s = shell_step(dir, "skipped", "touch started");
  s.not_run = StepRun{Outcome::skipped, "no GPU", 0, nullptr};
  const StepRun run = run_step(s);
  EXPECT_EQ(run.outcome, Outcome::skipped);
  EXPECT_EQ(run.reason, "no GPU");
  EXPECT_FALSE(fs::exists(dir.path() / "started"));
}

// Pass or fail never comes from printed text: exit 0 without the result file,
// or with one its reader refuses, is failed whatever the step said.
TEST(StepRunner, ExitZeroWithoutAnAcceptableResultFileFailed) {
  ScratchDir dir("step-no-result");
  const StepRun missing = run_step(shell_step(dir, "missing", "echo 'all ok'"));
  EXPECT_EQ(missing.outcome, Outcome::failed);
  EXPECT_NE(missing.reason.find("exit 0 without its result file"), std::string::npos) << missing.reason;
  Step s = shell_step(dir, "nonsense", "echo nonsense > out-nonsense.json; echo 'all ok'");
  s.read = [](const fs::path&, StepRun&) { throw std::runtime_error("not JSON"); };
  const StepRun refused = run_step(s);
  EXPECT_EQ(refused.outcome, Outcome::failed);
  EXPECT_EQ(refused.reason, "exit 0 but its output is refused: not JSON");
}

// A result file left by an earlier run is no result of this one.
TEST(StepRunner, AnOldResultFileIsRemovedBeforeTheStepStarts) {
  ScratchDir dir("step-old-result");
  dir.write("out-old.json", "{}");
  const StepRun run = run_step(shell_step(dir, "old", "exit 0"));
  EXPECT_EQ(run.outcome, Outcome::failed) << run.reason;
}

// The reader may record the outcome the result file holds (a sweep point's own).
TEST(StepRunner, TheReaderMaySetTheOutcomeItsFileRecords) {
  ScratchDir dir("step-reader-outcome");
  Step s = shell_step(dir, "unfit", "echo '{}' > out-unfit.json");
  s.read = [](const fs::path&, StepRun& run) { run.outcome = Outcome::does_not_fit, run.reason = "peak 90 GB"; };
  const StepRun run = run_step(s);
  EXPECT_EQ(run.outcome, Outcome::does_not_fit);
  EXPECT_EQ(run.reason, "peak 90 GB");
}

// Step a waits (up to its limit) for the file step b makes: beside b it ends
// ok, alone (exclusive) it times out and b runs after it.
std::vector<StepRun> run_waiting_pair(const ScratchDir& dir, int jobs, bool exclusive) {
  const std::string wait_for_b = "while [ ! -e b-ran ]; do sleep 0.02; done; echo '{}' > out-a.json";
  std::vector<Step> steps = {shell_step(dir, "a", wait_for_b, 2),
                             shell_step(dir, "b", "touch b-ran; echo '{}' > out-b.json")};
  steps[0].exclusive = exclusive;
  std::vector<StepRun> runs(2);
  std::vector<std::size_t> order;
  run_steps(steps, jobs, [&](std::size_t i, const StepRun& run) { runs[i] = run, order.push_back(i); });
  EXPECT_EQ(order.size(), 2u);
  return runs;
}

TEST(StepRunner, StepsRunUpToJobsAtOnceAndAnExclusiveOneAlone) {
  ScratchDir together("steps-jobs");
  const std::vector<StepRun> both = run_waiting_pair(together, 2, false);
  EXPECT_EQ(both[0].outcome, Outcome::ok) << both[0].reason;
  EXPECT_EQ(both[1].outcome, Outcome::ok);
  ScratchDir one("steps-one-job");
  EXPECT_EQ(run_waiting_pair(one, 1, false)[0].outcome, Outcome::timeout);
  ScratchDir alone("steps-exclusive");
  const std::vector<StepRun> exclusive = run_waiting_pair(alone, 2, true);
  EXPECT_EQ(exclusive[0].outcome, Outcome::timeout);
  EXPECT_EQ(exclusive[1].outcome, Outcome::ok);
}

// `ptdp accept` reports its steps in the suite's order, skipped ones included.
TEST(StepRunner, AStepNotRunIsRecordedAtItsTurn) {
  ScratchDir dir("steps-turn");
  std::vector<Step> steps = {shell_step(dir, "a", "sleep 0.3; echo '{}' > out-a.json"), shell_step(dir, "b", "")};
  steps[1].not_run = StepRun{Outcome::skipped, "one node", 0, nullptr};
  std::vector<std::size_t> order;
  run_steps(steps, 1, [&](std::size_t i, const StepRun&) { order.push_back(i); });
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1}));
}

TEST(StepRunner, AnInterruptEndsTheRunningStepsAndStartsNoMore) {
  ScratchDir dir("steps-interrupt");
  const std::vector<Step> steps = {shell_step(dir, "a", "touch a-ran; sleep 30"),
                                   shell_step(dir, "b", "touch b-ran; sleep 30"),
                                   shell_step(dir, "c", "touch c-ran")};
  int finished = 0;
  const auto both_started = [&] { return fs::exists(dir.path() / "a-ran") && fs::exists(dir.path() / "b-ran"); };
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(run_steps(steps, 2, [&](std::size_t, const StepRun&) { ++finished; }, both_started), 2u);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20);
  EXPECT_EQ(finished, 0);
  EXPECT_FALSE(fs::exists(dir.path() / "c-ran"));
}

}  // namespace
}  // namespace ptdp
