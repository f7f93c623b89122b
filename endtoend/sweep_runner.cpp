// Scheduling of point processes, their outcomes, progress and the summary.
#include "endtoend/sweep_runner.h"

#include <unistd.h>

#include <cstdio>
#include <deque>
#include <fstream>
#include <memory>
#include <thread>

#include "core/config/json_read.h"
#include "core/metrics/result_io.h"
#include "core/sweep/sweep_results.h"
#include "core/runtime/backend.h"
#include "endtoend/child_process.h"
#include "endtoend/commands.h"
#include "endtoend/interrupt.h"

namespace ptdp::cli {

namespace {

struct Task {
  const SweepPoint* point;
  ResultMode mode;
  std::string refused;  // non-empty: not run, recorded with this reason
};

struct Running {
  Task task;
  std::unique_ptr<ChildProcess> child;
  std::filesystem::path log, output;
  std::filesystem::path config;  // a measured point's config file; empty for projections
};

std::string device_of(const SweepPoint& p) { return device_name(p.config.machine.device); }

std::string self_path() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

std::string last_lines(const std::filesystem::path& log, int n) {
  std::ifstream in(log);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (static_cast<int>(lines.size()) > n) lines.pop_front();
  }
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : " | ") + l;
  return out;
}

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
    Running r{t, nullptr, stem + ".log", stem + ".json", {}};
    std::filesystem::remove(r.output);
    std::vector<std::string> argv;
    if (t.mode == ResultMode::projected) {
      argv = {self_path(), "sweep-point", sweep_.file.string(), "--point", std::to_string(t.point->index),
              "--out", r.output.string(), "--max-points", std::to_string(opt_.max_points)};
      if (opt_.delay_ms > 0) argv.insert(argv.end(), {"--delay-ms", std::to_string(opt_.delay_ms)});
      if (opt_.crash_point == t.point->index) argv.push_back("--crash");
      if (opt_.oom_point == t.point->index) argv.push_back("--bad-alloc");
    } else {
      const int ranks = t.point->config.plan.world_size();
      const std::string config = stem + "-config.json";
      write_json_atomic(config, t.point->config_json);
      r.config = config;
      argv = {self_path(), "train", "--config", config, "--device", device_of(*t.point), "--iterations",
              std::to_string(sweep_.train_iterations), "--warmup", std::to_string(sweep_.train_warmup), "--out",
              r.output.string()};
      if (opt_.crash_point == t.point->index) argv.insert(argv.end(), {"--fault", "kill:0:1"});
      if (opt_.oom_point == t.point->index)
        argv.insert(argv.end(), {"--fault", "oom:" + std::to_string(ranks - 1) + ":1"});
      // exec: the launcher itself is the child, so it gets the SIGTERM sent when the runner dies.
      argv = {"/bin/sh", "-c", "exec " + launcher_.command_line(launch_shape(ranks, t.point->config.machine), argv)};
    }
    r.child = std::make_unique<ChildProcess>(argv, r.log);
    running_.push_back(std::move(r));
  }

  [[noreturn]] void stop_all(const InterruptWatch& interrupt) {
    for (auto& r : running_) r.child->stop();
    std::fflush(stdout);
    std::fprintf(stderr, "ptdp sweep: interrupted by signal %d: ended %zu running point%s; %d finished point%s in %s, "
                 "a rerun resumes\n", interrupt.signal(), running_.size(), running_.size() == 1 ? "" : "s", done_,
                 done_ == 1 ? " is" : "s are", opt_.out.c_str());
    interrupt.end_by_signal();
  }

  double timeout_of(const Task& t) const {
    if (opt_.timeout_s > 0) return opt_.timeout_s;
    return t.mode == ResultMode::measured ? 1800 : 120;
  }

  void reap() {
    for (std::size_t i = 0; i < running_.size();) {
      Running& r = running_[i];
      int code = 0;
      const bool ended = r.child->poll(code);
      if (!ended && r.child->seconds() < timeout_of(r.task)) {
        ++i;
        continue;
      }
      PointRun run{r.task.mode, PointStatus::failed, "", r.child->seconds(), nullptr};
      if (!ended) {
        r.child->stop();
        run.status = PointStatus::timeout;
        run.reason = "no result within " + std::to_string(static_cast<int>(timeout_of(r.task))) + " s";
      } else {
        outcome(r, code, run);
      }
      finish(r.task, run);
      remove_scratch(r);
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  void outcome(const Running& r, int code, PointRun& run) const {
    const std::string tail = last_lines(r.log, 4);
    if (code != 0 || !std::filesystem::exists(r.output)) {
      run.status = code == kExitRefused       ? PointStatus::refused
                   : code == kExitOutOfMemory ? PointStatus::oom
                                              : PointStatus::failed;
      run.reason = (code >= 128 ? "killed by signal " + std::to_string(code - 128) : "exit " + std::to_string(code)) +
                   (tail.empty() ? "" : ": " + tail);
      return;
    }
    try {  // a child's file, read as strictly as any input: a point that wrote nonsense failed
      const nlohmann::json j = read_json_file(r.output);
      const JsonAt at(j, r.output.string());
      if (r.task.mode == ResultMode::measured) {
        run.result = at.object().value();
        run.status = PointStatus::ok;
        return;
      }
      run.status = point_status_from_string(at.get<std::string>("status", "failed"));
      run.reason = at.get<std::string>("reason", "");
      if (const auto result = at.find("result")) run.result = result->object().value();
    } catch (const JsonRefused& e) {
      run.status = PointStatus::failed;
      run.reason = std::string("exit 0 but its output is refused: ") + e.what();
    }
  }

  // The point's outcome and config files were only for handing over; its log stays for inspection.
  static void remove_scratch(const Running& r) {
    std::error_code ignored;
    std::filesystem::remove(r.output, ignored);
    if (!r.config.empty()) std::filesystem::remove(r.config, ignored);
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

// CPU points of up to max_ranks ranks; GPU points (16-bit) that fit this node's GPUs.
bool measurable_here(const SweepPoint& p, int max_ranks) {
  if (p.config.machine.device == Device::cpu) return p.config.plan.world_size() <= max_ranks;
  return p.config.plan.precision != Precision::fp32 && p.config.plan.world_size() <= cuda_devices();
}

std::deque<Task> plan_tasks(const Sweep& sweep, const SweepOptions& o, const SweepResults& results, int& resumed) {
  const SweepMode requested = o.mode.value_or(sweep.mode);
  std::deque<Task> tasks;
  for (const auto& p : sweep.points) {
    Task t{&p, ResultMode::projected, ""};
    if (requested == SweepMode::measure || (requested == SweepMode::automatic && measurable_here(p, o.max_ranks)))
      t.mode = ResultMode::measured;
    if (!p.errors.empty()) t.refused = p.errors.front().field + ": " + p.errors.front().message;
    else if (t.mode == ResultMode::measured && !measurable_here(p, o.max_ranks))
      t.refused = "cannot be measured here: needs " + p.config.machine.name + " with " +
                  std::to_string(p.config.plan.world_size()) + " ranks (this machine measures CPU-profile points of up to " +
                  std::to_string(o.max_ranks) + " ranks and 16-bit GPU points of up to " +
                  std::to_string(cuda_devices()) + " GPUs)";
    if (results.finished(point_key(sweep, p, t.mode))) ++resumed;
    else tasks.push_back(t);
  }
  return tasks;
}

}  // namespace

int run_sweep(const SweepOptions& options) {
  SweepOptions o = options;
  std::optional<Launcher> launcher;
  try {
    launcher = Launcher::parse(o.launcher, PTDP_MPIEXEC);
  } catch (const LauncherRefused& e) {
    std::fprintf(stderr, "ptdp sweep: --launcher: %s\n", e.what());
    return kExitRefused;
  }
  const nlohmann::json reference = load_reference_experiments();
  Sweep sweep;
  try {
    sweep = load_sweep(o.file, default_machines_dir(), &reference, o.max_points);
  } catch (const SweepRefused& e) {
    std::fprintf(stderr, "ptdp sweep: %s is refused (%zu problem%s):\n", o.file.c_str(), e.problems().size(),
                 e.problems().size() == 1 ? "" : "s");
    for (const auto& p : e.problems()) std::fprintf(stderr, "  %s\n", p.c_str());
    return kExitRefused;
  }
  if (o.out.empty()) o.out = (std::filesystem::path("results") / (sweep.name + ".json")).string();
  if (const std::string why = output_path_problem(o.out); !why.empty()) {
    std::fprintf(stderr, "ptdp sweep: --out=%s: %s\n", o.out.c_str(), why.c_str());
    return kExitRefused;
  }
  try {
    SweepResults results(o.out, sweep);
    const auto out = std::filesystem::path(o.out);
    const auto work = (out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path()) /
                      ("." + out.stem().string() + ".work");
    std::filesystem::create_directories(work);
    int resumed = 0;
    std::deque<Task> tasks = plan_tasks(sweep, o, results, resumed);
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
