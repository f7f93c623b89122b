// The hidden `ptdp sweep-slurm-point FILE --point I --launcher L --out DIR/point-I.json`,
// what an emitted Slurm job runs: the point measured through the launcher as
// the sweep runner measures it, its outcome (ok, failed with the exit status
// and the log's last lines, timeout, oom, or refused when it cannot start in
// this allocation) written atomically with the sweep's identity.
#include <cstdio>

#include "core/results/output_files.h"
#include "core/sweep/slurm_folder.h"
#include "endtoend/commands.h"
#include "endtoend/option_ranges.h"
#include "endtoend/point_process.h"

namespace ptdp::cli {

namespace {

struct SlurmPointArgs {
  SweepOptions sweep;  // file, launcher, timeout_s, max_points
  int point = 0;
  std::string out;
};

PointRun measure_point(const Sweep& sweep, const SweepPoint& p, const SlurmPointArgs& a, const Launcher& launcher) {
  const std::filesystem::path out(a.out);
  const std::string stem = (out.parent_path() / (out.stem().string() + "-run")).string();
  const PointStep step = point_step(sweep, p, ResultMode::measured, stem, a.sweep, launcher);
  return point_run(step, run_step(step.step));
}

int run_slurm_point(const SlurmPointArgs& a) {
  const std::optional<Launcher> launcher = parse_launcher_or_report(a.sweep.launcher);
  if (!launcher) return kExitRefused;
  const std::optional<Sweep> sweep = load_sweep_or_report(a.sweep.file, a.sweep.max_points);
  if (!sweep) return kExitRefused;
  if (a.point < 0 || a.point >= static_cast<int>(sweep->points.size())) {
    std::fprintf(stderr, "ptdp sweep-slurm-point: --point %d outside 0..%zu\n", a.point, sweep->points.size() - 1);
    return kExitRefused;
  }
  const SweepPoint& p = sweep->points[static_cast<std::size_t>(a.point)];
  PointFile f{sweep_identity(*sweep), a.point, {ResultMode::measured, Outcome::refused, "", 0, nullptr}};
  const std::string why = p.errors.empty() ? measure_refusal(p.config, rank_limits(a.sweep, *launcher))
                                           : p.errors.front().field + ": " + p.errors.front().message;
  if (why.empty()) f.run = measure_point(*sweep, p, a, *launcher);
  else f.run.reason = "cannot be measured in this job: " + why;
  write_json_atomic(a.out, point_file_json(f));
  std::printf("ptdp sweep %s: point %d %s%s%s -> %s\n", sweep->name.c_str(), a.point, to_string(f.run.status).c_str(),
              f.run.reason.empty() ? "" : ": ", f.run.reason.c_str(), a.out.c_str());
  return f.run.status == Outcome::ok ? kExitOk : kExitFailed;
}

}  // namespace

Command add_sweep_slurm_point_command(CLI::App& app) {
  auto a = std::make_shared<SlurmPointArgs>();
  CLI::App* sub = app.add_subcommand("sweep-slurm-point", "Measure one point of a sweep in a Slurm job "
                                                          "(what `ptdp sweep --emit-slurm` jobs run)");
  sub->group("");  // internal: hidden from the help
  sub->add_option("file", a->sweep.file, "Sweep JSON")->required()->check(CLI::ExistingFile);
  sub->add_option("--point", a->point, "Point index")->required()->check(integer_in(0, kMaxSweepPointsLimit));
  sub->add_option("--out", a->out, "The point's result (DIR/point-N.json)")->required();
  sub->add_option("--launcher", a->sweep.launcher, "How the point's ranks start (as ptdp sweep --launcher)")
      ->required();
  sub->add_option("--timeout", a->sweep.timeout_s, "Seconds the point may take")
      ->check(number_in(kMinPointTimeoutS, kMaxPointTimeoutS));
  sub->add_option("--max-points", a->sweep.max_points, "The sweep's --max-points")
      ->check(integer_in(1, kMaxSweepPointsLimit));
  return {sub, [a] { return run_slurm_point(*a); }};
}

}  // namespace ptdp::cli
