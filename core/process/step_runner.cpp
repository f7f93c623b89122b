// Starting steps in order within the jobs allowed, and reading each one's
// outcome from its exit status and result file.
#include "core/process/step_runner.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <memory>
#include <thread>

#include "core/process/child_process.h"

namespace ptdp {

namespace {

// The last `n` non-empty lines of a step's log, joined with " | ": the reason
// recorded beside a failed step's exit status.
std::string log_tail(const std::filesystem::path& log, int n) {
  std::ifstream in(log);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    lines.push_back(line);
    if (static_cast<int>(lines.size()) > n) lines.pop_front();
  }
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : " | ") + l;
  return out;
}

// "exit 1: <the log's last 4 lines>", "killed by signal 9: ...".
std::string exit_reason(int code, const std::filesystem::path& log, const std::string& what) {
  const std::string tail = log_tail(log, 4);
  return (code >= 128 ? "killed by signal " + std::to_string(code - 128) : "exit " + std::to_string(code)) + what +
         (tail.empty() ? "" : ": " + tail);
}

// The run of `step`, ended with exit status `code`: the outcome the status
// means; on exit 0 its result file must exist and its reader accept it.
StepRun ended_run(const Step& step, int code, double seconds) {
  StepRun run{outcome_of_exit(code), "", seconds, nullptr};
  std::error_code ec;
  const bool no_file = code == 0 && !step.output.empty() && !std::filesystem::exists(step.output, ec);
  if (no_file) run.outcome = Outcome::failed;
  if (run.outcome != Outcome::ok) {
    run.reason = exit_reason(code, step.log, no_file ? " without its result file " + step.output.string() : "");
    return run;
  }
  if (!step.read) return run;
  try {  // a child's file, read as strictly as any input: a step that wrote nonsense failed
    step.read(step.output, run);
  } catch (const std::exception& e) {
    run = {Outcome::failed, std::string("exit 0 but its output is refused: ") + e.what(), seconds, nullptr};
  }
  return run;
}

// A started step, polled without blocking (several run at once).
class StepProcess {
 public:
  explicit StepProcess(Step step) : step_(std::move(step)) {
    std::error_code ignored;
    if (!step_.output.empty()) std::filesystem::remove(step_.output, ignored);
    child_ = std::make_unique<ChildProcess>(step_.argv, step_.log);
  }

  // Its run once it ended, or once it passed its time limit (it is ended
  // first); nothing while it runs.
  std::optional<StepRun> poll() {
    int code = 0;
    if (child_->poll(code)) return ended_run(step_, code, child_->seconds());
    if (step_.time_limit_s <= 0 || child_->seconds() < step_.time_limit_s) return std::nullopt;
    const double seconds = child_->seconds();
    child_->stop();
    return StepRun{Outcome::timeout,
                   "no result within " + std::to_string(static_cast<int>(step_.time_limit_s)) + " s", seconds, nullptr};
  }

  // Ends it and everything it started (mpirun and its ranks).
  void stop() { child_->stop(); }

 private:
  Step step_;
  std::unique_ptr<ChildProcess> child_;
};

}  // namespace

std::size_t run_steps(const std::vector<Step>& steps, int jobs, const StepFinished& finished,
                      const std::function<bool()>& interrupted) {
  struct Running {
    std::size_t index;
    std::unique_ptr<StepProcess> process;
  };
  std::vector<Running> running;
  const auto exclusive = [&](const Running& r) { return steps[r.index].exclusive; };
  const auto can_start = [&](const Step& s) {
    if (running.empty()) return true;
    const bool alone = std::any_of(running.begin(), running.end(), exclusive);
    return !s.exclusive && !alone && static_cast<int>(running.size()) < std::max(1, jobs);
  };
  for (std::size_t next = 0; next < steps.size() || !running.empty();) {
    if (interrupted && interrupted()) {
      for (auto& r : running) r.process->stop();
      return running.size();
    }
    for (; next < steps.size() && can_start(steps[next]); ++next) {
      if (steps[next].not_run) finished(next, *steps[next].not_run);
      else running.push_back({next, std::make_unique<StepProcess>(steps[next])});
    }
    for (std::size_t i = 0; i < running.size();) {
      std::optional<StepRun> run = running[i].process->poll();
      if (!run) {
        ++i;
        continue;
      }
      const std::size_t index = running[i].index;
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      finished(index, *run);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

StepRun run_step(const Step& step) {
  StepRun out;
  run_steps({step}, 1, [&](std::size_t, const StepRun& run) { out = run; });
  return out;
}

}  // namespace ptdp
