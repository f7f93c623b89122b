// A sweep point as a process of its own: the command that runs it (`ptdp
// sweep-point` for a projection, `ptdp train` through the Launcher for a
// measurement) and how its exit status and output become a PointRun. The sweep
// runner starts many at once; an emitted Slurm job (`ptdp sweep-slurm-point`) one.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/launch/launcher.h"
#include "core/sweep/sweep_results.h"
#include "endtoend/child_process.h"
#include "endtoend/sweep_runner.h"

namespace ptdp::cli {

// One point's process and the files it hands over.
struct PointProcess {
  const SweepPoint* point = nullptr;
  ResultMode mode = ResultMode::projected;
  std::filesystem::path log, output;  // its stdout and stderr; what it writes (removed when read)
  std::filesystem::path config;       // a measured point's config file (removed when read); empty for projections
  double timeout_s = 0;
  std::unique_ptr<ChildProcess> child;
};

// Starts `point` in `mode`, its files named `stem`.log, `stem`.json and
// `stem`-config.json. Testing aids (crash, oom, delay) come from `o`.
PointProcess start_point(const Sweep& sweep, const SweepPoint& point, ResultMode mode, const std::string& stem,
                         const SweepOptions& o, const Launcher& launcher);

// Its outcome once it ended or ran past its timeout (then it is stopped and
// recorded as timeout); nothing while it runs. Its hand-over files are removed.
std::optional<PointRun> poll_point(PointProcess& p);

// Seconds a point may take: --timeout, else 120 projected and 1800 measured.
double point_timeout(const SweepOptions& o, ResultMode mode);

}  // namespace ptdp::cli
