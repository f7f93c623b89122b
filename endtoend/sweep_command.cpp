// `ptdp sweep FILE` runs a sweep (see sweep_runner.h); the hidden
// `ptdp sweep-point FILE --point I --out F` projects one point in a process of
// its own for the runner.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>

#include "core/results/result_io.h"
#include "core/sweep/project_point.h"
#include "endtoend/commands.h"
#include "endtoend/option_ranges.h"
#include "endtoend/slurm_sweep.h"
#include "endtoend/sweep_runner.h"

namespace ptdp::cli {

namespace {

struct PointArgs {
  std::string file, out;
  int point = 0, delay_ms = 0;
  std::int64_t max_points = kDefaultMaxSweepPoints;
  bool crash = false, throws = false, bad_alloc = false;
};

// std::bad_alloc ends it with the out-of-memory status (main's last handler),
// which is all the runner reads.
int run_point(const PointArgs& a) {
  if (a.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(a.delay_ms));
  if (a.crash) std::abort();  // testing aid: a point whose process dies
  if (a.throws) throw std::logic_error("injected exception (--throw)");  // testing aid: main's last handler
  if (a.bad_alloc) throw std::bad_alloc();  // testing aid: a point out of host memory
  const nlohmann::json reference = load_reference_experiments();
  const Sweep sweep = load_sweep(a.file, default_machines_dir(), &reference, a.max_points);
  if (a.point < 0 || a.point >= static_cast<int>(sweep.points.size())) {
    std::fprintf(stderr, "ptdp sweep-point: --point %d outside 0..%zu\n", a.point, sweep.points.size() - 1);
    return kExitRefused;
  }
  const PointOutcome o = project_point(sweep, sweep.points[static_cast<std::size_t>(a.point)], nullptr);
  write_json_atomic(a.out, {{"status", to_string(o.status)}, {"reason", o.reason}, {"result", o.result}});
  return kExitOk;
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand(
      "sweep", "Run a sweep (sweeps/*.json): every point in its own process, each finished point written at once, "
               "a rerun resumes.\nExit: 0 done, 1 a point failed or missed its acceptance band, 2 refused.");
  sub->add_option("file", o->file, "Sweep JSON")->required()->check(CLI::ExistingFile);
  auto mode = std::make_shared<std::string>();
  sub->add_option("--mode", *mode, "measure | project | auto (measure what this machine holds, project the rest); "
                                   "default: the sweep's")
      ->check(CLI::IsMember({"measure", "project", "auto"}));
  sub->add_option("--out", o->out, "Results file (default results/<name>.json); an existing one is resumed");
  sub->add_option("--jobs", o->jobs, "Projections run in parallel (measurements run one at a time)")
      ->capture_default_str()
      ->check(integer_in(1, kMaxJobs));
  sub->add_option("--timeout", o->timeout_s, "Seconds a point may take (default 120 projected, 1800 measured)")
      ->check(number_in(kMinPointTimeoutS, kMaxPointTimeoutS));
  sub->add_option("--max-ranks", o->max_ranks,
                  "Most ranks a measured point may use (default: the Slurm allocation's SLURM_NTASKS inside one, else "
                  "8 for CPU points); a point needing more is recorded as refused")
      ->check(integer_in(1, kMaxRanks));
  sub->add_option("--launcher", o->launcher,
                  "How measured points start their ranks: mpirun (default; srun with --emit-slurm), srun, or a "
                  "template with {ranks}, {nodes}, {ranks_per_node}, {gpus_per_node} and {cmd}, e.g. "
                  "\"mpirun -H a,b -np {ranks} {cmd}\"");
  sub->add_option("--emit-slurm", o->emit_slurm,
                  "Write one sbatch job per measured point, a manifest and submit.sh into this folder, and run "
                  "nothing (docs/slurm.md)");
  sub->add_option("--collect", o->collect,
                  "Merge what the --emit-slurm jobs in this folder wrote into --out, and run nothing")
      ->excludes("--emit-slurm");
  sub->add_option("--max-points", o->max_points,
                  "Refuse a sweep that expands to more points than this (counted before expanding)")
      ->capture_default_str()
      ->check(integer_in(1, kMaxSweepPointsLimit));
  sub->add_option("--point-delay-ms", o->delay_ms, "Testing aid: each projected point waits this long first")
      ->check(integer_in(0, kMaxDelayMs));
  sub->add_option("--crash-point", o->crash_point, "Testing aid: the process of this point index crashes")
      ->check(integer_in(0, kMaxSweepPointsLimit));
  sub->add_option("--oom-point", o->oom_point,
                  "Testing aid: this point runs out of memory (a measured point's last rank in its device allocator, a "
                  "projected point in a host allocation)")
      ->check(integer_in(0, kMaxSweepPointsLimit));
  return {sub, [o, mode] {
            if (!mode->empty()) o->mode = sweep_mode_from_string(*mode);
            if (!o->emit_slurm.empty()) return emit_slurm(*o);
            if (!o->collect.empty()) return collect_slurm(*o);
            return run_sweep(*o);
          }};
}

Command add_sweep_point_command(CLI::App& app) {
  auto a = std::make_shared<PointArgs>();
  CLI::App* sub = app.add_subcommand("sweep-point", "Project one point of a sweep (used by `ptdp sweep`)");
  sub->group("");  // internal: hidden from the help
  sub->add_option("file", a->file, "Sweep JSON")->required()->check(CLI::ExistingFile);
  sub->add_option("--point", a->point, "Point index")->required()->check(integer_in(0, kMaxSweepPointsLimit));
  sub->add_option("--out", a->out, "Outcome JSON")->required();
  sub->add_option("--delay-ms", a->delay_ms, "Wait this long first (testing aid)")->check(integer_in(0, kMaxDelayMs));
  sub->add_option("--max-points", a->max_points, "The sweep's --max-points")
      ->check(integer_in(1, kMaxSweepPointsLimit));
  sub->add_flag("--crash", a->crash, "Crash (testing aid)");
  sub->add_flag("--throw", a->throws, "Throw an exception no command handles (testing aid)");
  sub->add_flag("--bad-alloc", a->bad_alloc, "Fail a host allocation (testing aid)");
  return {sub, [a] { return run_point(*a); }};
}

}  // namespace ptdp::cli
