// Scheduling of point processes, their outcomes, progress and the summary.
#include "endtoend/sweep_runner.h"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <thread>

#include "core/launch/rank_limits.h"
#include "core/io/staged_file.h"
#include "core/metrics/output_files.h"
#include "core/runtime/backend.h"
#include "core/sweep/sweep_results.h"
#include "endtoend/commands.h"
#include "endtoend/interrupt.h"
#include "endtoend/point_process.h"

namespace ptdp::cli {

namespace {

struct Task {
  const SweepPoint* point;
  ResultMode mode;
  std::string refused;  // non-empty: not run, recorded with this reason
};

struct Running {
  Task task;
  PointProcess process;
};

class Runner {
 public:
  Runner(const SweepOptions& o, const Sweep& s, SweepResults& r, std::filesystem::path work, Launcher launcher)
      : opt_(o), sweep_(s), results_(r), work_(std::move(work)), launcher_(std::move(launcher)) {}

  // Runs the tasks; on SIGTERM, SIGINT or SIGHUP ends the running points'
  // processes and then this process by the same signal.
  int run(std::deque<Task> tasks, const InterruptWatch& interrupt) {
    total_ = static_cast<int>(tasks.size());
    while ((!tasks.empty() || !running_.empty()) && interrupt.signal() == 0) {
      start_ready(tasks);
      reap();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (interrupt.signal() != 0) stop_all(interrupt);
    return summary();
  }

 private:
  bool can_start(const Task& t) const {
    if (running_.empty()) return true;
    if (t.mode == ResultMode::measured) return false;
    for (const auto& r : running_)
      if (r.task.mode == ResultMode::measured) return false;
    return static_cast<int>(running_.size()) < std::max(1, opt_.jobs);
  }

  void start_ready(std::deque<Task>& tasks) {
    while (!tasks.empty() && (!tasks.front().refused.empty() || can_start(tasks.front()))) {
      Task t = tasks.front();
      tasks.pop_front();
      if (!t.refused.empty()) finish(t, {t.mode, PointStatus::refused, t.refused, 0, nullptr});
      else start(t);
    }
  }

  void start(const Task& t) {
    const std::string stem = work_.string() + "/point-" + std::to_string(t.point->index) + "-" + to_string(t.mode);
    running_.push_back({t, start_point(sweep_, *t.point, t.mode, stem, opt_, launcher_)});
  }

  [[noreturn]] void stop_all(const InterruptWatch& interrupt) {
    for (auto& r : running_) r.process.child->stop();
    std::fflush(stdout);
    std::fprintf(stderr, "ptdp sweep: interrupted by signal %d: ended %zu running point%s; %d finished point%s in %s, "
                 "a rerun resumes\n", interrupt.signal(), running_.size(), running_.size() == 1 ? "" : "s", done_,
                 done_ == 1 ? " is" : "s are", opt_.out.c_str());
    interrupt.end_by_signal();
  }

  void reap() {
    for (std::size_t i = 0; i < running_.size();) {
      const std::optional<PointRun> run = poll_point(running_[i].process);
      if (!run) {
        ++i;
        continue;
      }
      finish(running_[i].task, *run);
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  void finish(const Task& t, const PointRun& run) {
    const nlohmann::json record = point_record(sweep_, *t.point, run);
    results_.add(record);
    ++done_;
    elapsed_ += run.seconds;
    if (is_failure(run.status)) ++failed_;
    const Acceptance accepted = acceptance(t.point->expect, run);
    if (accepted == Acceptance::fail) ++rejected_;
    print_progress(*t.point, record, accepted);
  }

  void print_progress(const SweepPoint& p, const nlohmann::json& record, Acceptance accepted) const {
    std::string what = record["status"].get<std::string>();
    if (record["value"].is_number()) {
      char text[160];
      std::snprintf(text, sizeof text, "%.4g %s", record["value"].get<double>(), sweep_.metric.c_str());
      what = text;
      if (record["paper"].is_number() && record["error"].is_number()) {
        std::snprintf(text, sizeof text, " (paper %.4g, %+.1f%%)", record["paper"].get<double>(),
                      100 * record["error"].get<double>());
        what += text;
      }
    } else if (record.contains("reason")) {
      what += ": " + record["reason"].get<std::string>().substr(0, 120);
    }
    if (accepted != Acceptance::none) what += accepted == Acceptance::pass ? "  PASS" : "  FAIL";
    const int left = total_ - done_;
    const double eta = done_ > 0 ? elapsed_ / done_ * left / std::max(1, opt_.jobs) : 0;
    std::printf("[%*d/%d] %s #%d %s %s %s: %s  ETA %d:%02d\n", static_cast<int>(std::to_string(total_).size()), done_,
                total_, sweep_.name.c_str(), p.index, p.series.c_str(), p.label.c_str(),
                record["mode"].get<std::string>().c_str(), what.c_str(), static_cast<int>(eta) / 60,
                static_cast<int>(eta) % 60);
    std::fflush(stdout);
  }

  int summary() const {
    std::printf("%s: %d points run, %d failed, %d below acceptance; results in %s\n", sweep_.name.c_str(), done_,
                failed_, rejected_, opt_.out.c_str());
    return failed_ > 0 || rejected_ > 0 ? kExitFailed : kExitOk;
  }

  const SweepOptions& opt_;
  const Sweep& sweep_;
  SweepResults& results_;
  std::filesystem::path work_;
  Launcher launcher_;
  std::vector<Running> running_;
  int total_ = 0, done_ = 0, failed_ = 0, rejected_ = 0;
  double elapsed_ = 0;
};

}  // namespace

RankLimits rank_limits(const SweepOptions& o, const Launcher& launcher) {
  RankLimits l;
  if (o.max_ranks > 0) l.max_ranks = o.max_ranks;
  l.allocation = allocation_ranks(std::getenv("SLURM_NTASKS"));
  l.local_gpus = cuda_devices();
  // Open MPI's mpirun starts ranks across the nodes of the Slurm allocation it runs in, and on this machine only outside one.
  l.spans_nodes = launcher.name() != "mpirun" || l.allocation.has_value();
  return l;
}

namespace {

std::deque<Task> plan_tasks(const Sweep& sweep, const SweepOptions& o, const RankLimits& limits,
                            const SweepResults& results, int& resumed) {
  const SweepMode requested = o.mode.value_or(sweep.mode);
  std::deque<Task> tasks;
  for (const auto& p : sweep.points) {
    Task t{&p, ResultMode::projected, ""};
    const std::string unmeasurable = measure_refusal(p.config, limits);
    if (requested == SweepMode::measure || (requested == SweepMode::automatic && unmeasurable.empty()))
      t.mode = ResultMode::measured;
    if (!p.errors.empty()) t.refused = p.errors.front().field + ": " + p.errors.front().message;
    else if (t.mode == ResultMode::measured && !unmeasurable.empty())
      t.refused = "cannot be measured here: " + p.config.machine.name + " point " + unmeasurable;
    if (results.finished(point_key(sweep, p, t.mode))) ++resumed;
    else tasks.push_back(t);
  }
  return tasks;
}

}  // namespace

std::optional<Sweep> load_sweep_or_report(const std::string& file, std::int64_t max_points) {
  const nlohmann::json reference = load_reference_experiments();
  try {
    return load_sweep(file, default_machines_dir(), &reference, max_points);
  } catch (const SweepRefused& e) {
    std::fprintf(stderr, "ptdp sweep: %s is refused (%zu problem%s):\n", file.c_str(), e.problems().size(),
                 e.problems().size() == 1 ? "" : "s");
    for (const auto& p : e.problems()) std::fprintf(stderr, "  %s\n", p.c_str());
    return std::nullopt;
  }
}

std::optional<Launcher> parse_launcher_or_report(const std::string& text) {
  try {
    return Launcher::parse(text, PTDP_MPIEXEC);
  } catch (const LauncherRefused& e) {
    std::fprintf(stderr, "ptdp sweep: --launcher: %s\n", e.what());
    return std::nullopt;
  }
}

bool resolve_results_path(SweepOptions& o, const Sweep& sweep) {
  if (o.out.empty()) o.out = (std::filesystem::path("results") / (sweep.name + ".json")).string();
  std::string why = output_path_problem(o.out);
  if (why.empty() && same_file(o.out, o.file)) why = "is the sweep file itself; an output never replaces an input";
  if (!why.empty()) std::fprintf(stderr, "ptdp sweep: --out=%s: %s\n", o.out.c_str(), why.c_str());
  return why.empty();
}

int run_sweep(const SweepOptions& options) {
  SweepOptions o = options;
  const std::optional<Launcher> launcher = parse_launcher_or_report(o.launcher);
  if (!launcher) return kExitRefused;
  const std::optional<Sweep> loaded = load_sweep_or_report(o.file, o.max_points);
  if (!loaded) return kExitRefused;
  const Sweep& sweep = *loaded;
  if (!resolve_results_path(o, sweep)) return kExitRefused;
  try {
    SweepResults results(o.out, sweep);
    const auto out = std::filesystem::path(o.out);
    const auto work = (out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path()) /
                      ("." + out.stem().string() + ".work");
    std::filesystem::create_directories(work);
    int resumed = 0;
    std::deque<Task> tasks = plan_tasks(sweep, o, rank_limits(o, *launcher), results, resumed);
    std::printf("ptdp sweep %s: %zu points (%d valid), %d already done, %zu to run -> %s\n", sweep.name.c_str(),
                sweep.points.size(), sweep.valid_points(), resumed, tasks.size(), o.out.c_str());
    Runner runner(o, sweep, results, work, *launcher);
    const InterruptWatch interrupt;
    return runner.run(std::move(tasks), interrupt);
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "ptdp sweep: %s\n", e.what());
    return kExitRefused;
  }
}

}  // namespace ptdp::cli
