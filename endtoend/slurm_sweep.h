// Sweeps on a Slurm cluster without a runner waiting on a login node
// (docs/slurm.md): `ptdp sweep FILE --emit-slurm DIR` writes one sbatch job per
// measured point (a job per point, not an array job: an array's tasks share one
// resource request, and points differ in nodes and tasks); each job runs the
// hidden `ptdp sweep-slurm-point`, which starts the point through the Launcher
// and writes DIR/point-N.json; `ptdp sweep FILE --collect DIR --out RESULT`
// merges those into the ordinary sweep results file. The folder's layout is
// core/sweep/slurm_folder.h.
#pragma once
#include "endtoend/sweep_runner.h"

namespace ptdp::cli {

// Seconds a job's time limit adds to its point's timeout: starting, loading, writing.
inline constexpr double kSlurmJobMarginS = 300;

// Writes the jobs, manifest.json and submit.sh into o.emit_slurm, all or none.
// Exit 0 written; 2 refused (a bad sweep or launcher, a folder holding another
// sweep's jobs or other files, no point to measure).
int emit_slurm(const SweepOptions& o);

// Merges the points' results of o.collect into o.out: exit 0 every point ok;
// 1 a point failed, is missing or missed its band; 2 refused (not an
// --emit-slurm folder of this sweep, a bad --out), or a point's result came
// from another version of the sweep file or another ptdp commit (then it is
// recorded as refused, naming the mismatch, and its result is not merged).
int collect_slurm(const SweepOptions& o);

}  // namespace ptdp::cli
