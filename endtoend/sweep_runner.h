// The sweep runner behind `ptdp sweep`: its points a list of steps of the step
// runner (core/process/step_runner.h), each a process of its own (`ptdp
// sweep-point` for projections, `[mpirun] ptdp train` for measurements), so a
// crash, an out-of-memory or a timeout is a recorded outcome and the sweep goes
// on; each finished point is written at once; a rerun resumes. Killed or
// interrupted, it ends the running points' processes (mpirun and its ranks) first.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/launch/launcher.h"
#include "core/launch/rank_limits.h"
#include "core/sweep/sweep.h"

namespace ptdp::cli {

struct SweepOptions {
  std::string file;        // the sweep
  std::string out;         // results file (default results/<name>.json)
  std::optional<SweepMode> mode;  // --mode; empty: the sweep's own
  int jobs = 1;            // projections in parallel (measurements run one at a time)
  double timeout_s = 0;    // per point; 0: 120 s projected, 1800 s measured
  int max_ranks = 0;       // --max-ranks: the most ranks a measured point may use; 0: not given (rank_limits.h)
  std::string launcher;    // --launcher: a preset or template (core/launch/launcher.h); "": mpirun, srun when emitting
  std::string emit_slurm;  // --emit-slurm DIR: write the measured points' Slurm jobs there (slurm_sweep.h)
  std::string collect;     // --collect DIR: merge what those jobs wrote into --out
  std::int64_t max_points = kDefaultMaxSweepPoints;  // a sweep expanding to more is refused before anything runs
  int delay_ms = 0;        // testing aid: each projected point sleeps this long first
  int crash_point = -1;    // testing aid: this point's process crashes
  int oom_point = -1;      // testing aid: this point runs out of memory (measured: its last rank;
                           // projected: std::bad_alloc)
};

// Runs the sweep; returns the exit status (0 done, 1 a point failed or missed
// its acceptance band, 2 the sweep or its results file was refused).
int run_sweep(const SweepOptions& options);

// Helpers the runner shares with --emit-slurm and --collect. Each reports to
// stderr what it refuses ("ptdp sweep: ...") and returns nothing (false).
std::optional<Sweep> load_sweep_or_report(const std::string& file, std::int64_t max_points);
std::optional<Launcher> parse_launcher_or_report(const std::string& text);
// Sets o.out to results/<name>.json when empty; false when it cannot be written.
bool resolve_results_path(SweepOptions& o, const Sweep& sweep);
// What bounds a measured point started here through `launcher`: --max-ranks,
// SLURM_NTASKS, and this machine's GPUs for the mpirun preset outside an allocation.
RankLimits rank_limits(const SweepOptions& o, const Launcher& launcher);

}  // namespace ptdp::cli
