// A point's command, and its result file read back as strictly as any input.
#include "endtoend/point_process.h"

#include "core/config/json_read.h"
#include "core/results/result_io.h"
#include "endtoend/commands.h"

namespace ptdp::cli {

namespace {

std::string self_path() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

std::vector<std::string> projection_argv(const Sweep& sweep, const PointStep& p, const SweepOptions& o) {
  const int index = p.point->index;
  std::vector<std::string> argv = {self_path(), "sweep-point", sweep.file.string(), "--point", std::to_string(index),
                                   "--out", p.step.output.string(), "--max-points", std::to_string(o.max_points)};
  if (o.delay_ms > 0) argv.insert(argv.end(), {"--delay-ms", std::to_string(o.delay_ms)});
  if (o.crash_point == index) argv.push_back("--crash");
  if (o.oom_point == index) argv.push_back("--bad-alloc");
  return argv;
}

// `ptdp train` on the point's config, started by the launcher through /bin/sh.
std::vector<std::string> measurement_argv(const Sweep& sweep, const PointStep& p, const SweepOptions& o,
                                          const Launcher& launcher) {
  const SweepPoint& point = *p.point;
  const int ranks = point.config.plan.world_size();
  write_json_atomic(p.config, point.config_json);
  std::vector<std::string> argv = {self_path(), "train", "--config", p.config.string(), "--device",
                                   device_name(point.config.machine.device), "--iterations",
                                   std::to_string(sweep.train_iterations), "--warmup",
                                   std::to_string(sweep.train_warmup), "--out", p.step.output.string()};
  if (o.crash_point == point.index) argv.insert(argv.end(), {"--fault", "kill:0:1"});
  if (o.oom_point == point.index) argv.insert(argv.end(), {"--fault", "oom:" + std::to_string(ranks - 1) + ":1"});
  // exec: the launcher itself is the child, so it gets the SIGTERM sent when the runner dies.
  return {"/bin/sh", "-c", "exec " + launcher.command_line(launch_shape(ranks, point.config.machine), argv)};
}

// The result file of a measurement: `ptdp train`'s result.
void read_measurement(const std::filesystem::path& output, StepRun& run) {
  const nlohmann::json j = read_json_file(output);
  run.result = JsonAt(j, output.string()).object().value();
}

// The result file of a projection: the point's own outcome (ok, does_not_fit,
// refused, failed), its reason and its result.
void read_projection(const std::filesystem::path& output, StepRun& run) {
  const nlohmann::json j = read_json_file(output);
  const JsonAt at(j, output.string());
  run.outcome = outcome_from_string(at.get<std::string>("status", "failed"));
  run.reason = at.get<std::string>("reason", "");
  if (const auto result = at.find("result")) run.result = result->object().value();
}

}  // namespace

double point_timeout(const SweepOptions& o, ResultMode mode) {
  if (o.timeout_s > 0) return o.timeout_s;
  return mode == ResultMode::measured ? 1800 : 120;
}

PointStep point_step(const Sweep& sweep, const SweepPoint& point, ResultMode mode, const std::string& stem,
                     const SweepOptions& o, const Launcher& launcher, const std::string& refused) {
  PointStep p{&point, mode, {}, {}};
  Step& s = p.step;
  s.name = stem, s.log = stem + ".log", s.output = stem + ".json", s.time_limit_s = point_timeout(o, mode);
  s.exclusive = mode == ResultMode::measured;
  if (!refused.empty()) {
    s.not_run = StepRun{Outcome::refused, refused, 0, nullptr};
  } else if (mode == ResultMode::projected) {
    s.argv = projection_argv(sweep, p, o);
    s.read = read_projection;
  } else {
    p.config = stem + "-config.json";
    s.argv = measurement_argv(sweep, p, o, launcher);
    s.read = read_measurement;
  }
  return p;
}

PointRun point_run(const PointStep& p, const StepRun& run) {
  std::error_code ignored;  // the point's result and config files were only for handing over; its log stays
  std::filesystem::remove(p.step.output, ignored);
  if (!p.config.empty()) std::filesystem::remove(p.config, ignored);
  return {p.mode, run.outcome, run.reason, run.seconds, run.result};
}

}  // namespace ptdp::cli
