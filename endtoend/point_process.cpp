// Starting a point's process, and reading its outcome back as strictly as any input.
#include "endtoend/point_process.h"


#include "core/config/json_read.h"
#include "core/metrics/result_io.h"
#include "endtoend/commands.h"

namespace ptdp::cli {

namespace {

std::string self_path() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

std::vector<std::string> projection_argv(const Sweep& sweep, const PointProcess& p, const SweepOptions& o) {
  const int index = p.point->index;
  std::vector<std::string> argv = {self_path(), "sweep-point", sweep.file.string(), "--point", std::to_string(index),
                                   "--out", p.output.string(), "--max-points", std::to_string(o.max_points)};
  if (o.delay_ms > 0) argv.insert(argv.end(), {"--delay-ms", std::to_string(o.delay_ms)});
  if (o.crash_point == index) argv.push_back("--crash");
  if (o.oom_point == index) argv.push_back("--bad-alloc");
  return argv;
}

// `ptdp train` on the point's config, started by the launcher through /bin/sh.
std::vector<std::string> measurement_argv(const Sweep& sweep, const PointProcess& p, const SweepOptions& o,
                                          const Launcher& launcher) {
  const SweepPoint& point = *p.point;
  const int ranks = point.config.plan.world_size();
  write_json_atomic(p.config, point.config_json);
  std::vector<std::string> argv = {self_path(), "train", "--config", p.config.string(), "--device",
                                   device_name(point.config.machine.device), "--iterations",
                                   std::to_string(sweep.train_iterations), "--warmup",
                                   std::to_string(sweep.train_warmup), "--out", p.output.string()};
  if (o.crash_point == point.index) argv.insert(argv.end(), {"--fault", "kill:0:1"});
  if (o.oom_point == point.index) argv.insert(argv.end(), {"--fault", "oom:" + std::to_string(ranks - 1) + ":1"});
  // exec: the launcher itself is the child, so it gets the SIGTERM sent when the runner dies.
  return {"/bin/sh", "-c", "exec " + launcher.command_line(launch_shape(ranks, point.config.machine), argv)};
}

void read_outcome(const PointProcess& p, int code, PointRun& run) {
  const std::string tail = log_tail(p.log, 4);
  if (code != 0 || !std::filesystem::exists(p.output)) {
    run.status = code == kExitRefused       ? PointStatus::refused
                 : code == kExitOutOfMemory ? PointStatus::oom
                                            : PointStatus::failed;
    run.reason = (code >= 128 ? "killed by signal " + std::to_string(code - 128) : "exit " + std::to_string(code)) +
                 (tail.empty() ? "" : ": " + tail);
    return;
  }
  try {  // a child's file, read as strictly as any input: a point that wrote nonsense failed
    const nlohmann::json j = read_json_file(p.output);
    const JsonAt at(j, p.output.string());
    if (p.mode == ResultMode::measured) {
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
void remove_hand_over(const PointProcess& p) {
  std::error_code ignored;
  std::filesystem::remove(p.output, ignored);
  if (!p.config.empty()) std::filesystem::remove(p.config, ignored);
}

}  // namespace

double point_timeout(const SweepOptions& o, ResultMode mode) {
  if (o.timeout_s > 0) return o.timeout_s;
  return mode == ResultMode::measured ? 1800 : 120;
}

PointProcess start_point(const Sweep& sweep, const SweepPoint& point, ResultMode mode, const std::string& stem,
                         const SweepOptions& o, const Launcher& launcher) {
  PointProcess p{&point, mode, stem + ".log", stem + ".json", {}, point_timeout(o, mode), nullptr};
  std::filesystem::remove(p.output);
  std::vector<std::string> argv;
  if (mode == ResultMode::projected) {
    argv = projection_argv(sweep, p, o);
  } else {
    p.config = stem + "-config.json";
    argv = measurement_argv(sweep, p, o, launcher);
  }
  p.child = std::make_unique<ChildProcess>(argv, p.log);
  return p;
}

std::optional<PointRun> poll_point(PointProcess& p) {
  int code = 0;
  const bool ended = p.child->poll(code);
  if (!ended && p.child->seconds() < p.timeout_s) return std::nullopt;
  PointRun run{p.mode, PointStatus::failed, "", p.child->seconds(), nullptr};
  if (!ended) {
    p.child->stop();
    run.status = PointStatus::timeout;
    run.reason = "no result within " + std::to_string(static_cast<int>(p.timeout_s)) + " s";
  } else {
    read_outcome(p, code, run);
  }
  remove_hand_over(p);
  return run;
}

}  // namespace ptdp::cli
