// A sweep as a list of steps: its points planned, run by the step runner,
// recorded as they finish, with progress and the summary.
#include "endtoend/sweep_runner.h"

#include <cstdio>
#include <cstdlib>

#include "core/io/staged_file.h"
#include "core/launch/rank_limits.h"
#include "core/results/output_files.h"
#include "core/runtime/backend.h"
#include "core/sweep/sweep_results.h"
#include "endtoend/commands.h"
#include "endtoend/interrupt.h"
#include "endtoend/point_process.h"

namespace ptdp::cli {

namespace {

// The sweep's side of its steps: each finished point recorded at once, a
// progress line with the ETA, and the summary.
class Progress {
 public:
  Progress(const SweepOptions& o, const Sweep& s, SweepResults& r, int total)
      : opt_(o), sweep_(s), results_(r), total_(total) {}

  void finish(const SweepPoint& point, const PointRun& run) {
    const nlohmann::json record = point_record(sweep_, point, run);
    results_.add(record);
    ++done_;
    elapsed_ += run.seconds;
    if (is_failure(run.status)) ++failed_;
    const Acceptance accepted = acceptance(point.expect, run);
    if (accepted == Acceptance::fail) ++rejected_;
    print(point, record, accepted);
  }

  int done() const { return done_; }

  int summary() const {
    std::printf("%s: %d points run, %d failed, %d below acceptance; results in %s\n", sweep_.name.c_str(), done_,
                failed_, rejected_, opt_.out.c_str());
    return failed_ > 0 || rejected_ > 0 ? kExitFailed : kExitOk;
  }

 private:
  void print(const SweepPoint& p, const nlohmann::json& record, Acceptance accepted) const {
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

  const SweepOptions& opt_;
  const Sweep& sweep_;
  SweepResults& results_;
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

// The points still to run, as steps (a point that may not run: not run, refused with the reason).
std::vector<PointStep> plan_points(const Sweep& sweep, const SweepOptions& o, const Launcher& launcher,
                                   const std::filesystem::path& work, const SweepResults& results, int& resumed) {
  const RankLimits limits = rank_limits(o, launcher);
  const SweepMode requested = o.mode.value_or(sweep.mode);
  std::vector<PointStep> points;
  for (const auto& p : sweep.points) {
    ResultMode mode = ResultMode::projected;
    const std::string unmeasurable = measure_refusal(p.config, limits);
    if (requested == SweepMode::measure || (requested == SweepMode::automatic && unmeasurable.empty()))
      mode = ResultMode::measured;
    if (results.finished(point_key(sweep, p, mode))) {
      ++resumed;
      continue;
    }
    std::string refused;
    if (!p.errors.empty()) refused = p.errors.front().field + ": " + p.errors.front().message;
    else if (mode == ResultMode::measured && !unmeasurable.empty())
      refused = "cannot be measured here: " + p.config.machine.name + " point " + unmeasurable;
    const std::string stem = (work / ("point-" + std::to_string(p.index) + "-" + to_string(mode))).string();
    points.push_back(point_step(sweep, p, mode, stem, o, launcher, refused));
  }
  return points;
}

// Runs the points, recording each as it finishes. On SIGTERM, SIGINT or SIGHUP
// it ends the running points' processes and then this process by the same signal.
int run_points(const std::vector<PointStep>& points, const SweepOptions& o, const Sweep& sweep,
               SweepResults& results) {
  std::vector<Step> steps;
  for (const PointStep& p : points) steps.push_back(p.step);
  Progress progress(o, sweep, results, static_cast<int>(points.size()));
  const InterruptWatch interrupt;
  const auto finished = [&](std::size_t i, const StepRun& run) {
    progress.finish(*points[i].point, point_run(points[i], run));
  };
  const std::size_t ended = run_steps(steps, o.jobs, finished, [&] { return interrupt.signal() != 0; });
  if (interrupt.signal() == 0) return progress.summary();
  for (const PointStep& p : points) point_run(p, {});  // the hand-over files of the points not run
  std::fflush(stdout);
  std::fprintf(stderr, "ptdp sweep: interrupted by signal %d: ended %zu running point%s; %d finished point%s in %s, "
               "a rerun resumes\n", interrupt.signal(), ended, ended == 1 ? "" : "s", progress.done(),
               progress.done() == 1 ? " is" : "s are", o.out.c_str());
  interrupt.end_by_signal();
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
    const std::vector<PointStep> points = plan_points(sweep, o, *launcher, work, results, resumed);
    std::printf("ptdp sweep %s: %zu points (%d valid), %d already done, %zu to run -> %s\n", sweep.name.c_str(),
                sweep.points.size(), sweep.valid_points(), resumed, points.size(), o.out.c_str());
    return run_points(points, o, sweep, results);
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "ptdp sweep: %s\n", e.what());
    return kExitRefused;
  }
}

}  // namespace ptdp::cli
