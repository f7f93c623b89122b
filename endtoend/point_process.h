// A sweep point as a step of the step runner (core/process/step_runner.h): the
// command that runs it (`ptdp sweep-point` for a projection, `ptdp train`
// through the Launcher for a measurement), how its result file is read, and
// how its step's run becomes a PointRun. The sweep runner runs many; an
// emitted Slurm job (`ptdp sweep-slurm-point`) one.
#pragma once
#include <filesystem>
#include <string>

#include "core/launch/launcher.h"
#include "core/process/step_runner.h"
#include "core/sweep/sweep_results.h"
#include "endtoend/sweep_runner.h"

namespace ptdp::cli {

// One point's step and the files it hands over.
struct PointStep {
  const SweepPoint* point = nullptr;
  ResultMode mode = ResultMode::projected;
  Step step;                      // its log stays; its result file is removed once read
  std::filesystem::path config;   // a measured point's config file (removed once read); empty for projections
};

// `point` in `mode`, its files named `stem`.log, `stem`.json and
// `stem`-config.json (written now, for a measurement). Testing aids (crash,
// oom, delay) come from `o`. A non-empty `refused`: not run, recorded as
// refused with that reason.
PointStep point_step(const Sweep& sweep, const SweepPoint& point, ResultMode mode, const std::string& stem,
                     const SweepOptions& o, const Launcher& launcher, const std::string& refused = "");

// The point's record of its step's run; its hand-over files are removed.
PointRun point_run(const PointStep& p, const StepRun& run);

// Seconds a point may take: --timeout, else 120 projected and 1800 measured.
double point_timeout(const SweepOptions& o, ResultMode mode);

}  // namespace ptdp::cli
