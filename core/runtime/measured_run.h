// A measured training run: iterations timed on every rank, then one RunResult
// on rank 0 with the figures gathered from all ranks and the run's own costs
// replayed through the simulator (bubble.simulated). Collective over `world`.
// `ptdp train` then puts the projection of the same configuration beside it
// (attach_projection, core/sim/projector.h).
#pragma once
#include <functional>
#include <vector>

#include "core/comm/process_groups.h"
#include "core/results/result.h"
#include "core/results/timeline.h"
#include "core/runtime/backend.h"
#include "core/runtime/trainer.h"

namespace ptdp {

// What every rank keeps of its iterations.
struct TrainSeries {
  std::vector<double> seconds;             // timed iterations (after the warm-up), slowest rank's
  std::vector<double> own_seconds;         // the same iterations' wall time on this rank
  std::vector<double> loss, grad_norm, lr; // every iteration (lr: the learning rate it stepped with)
  std::vector<double> bubble, idle_share;  // per world rank, means over the timed iterations
  std::vector<double> compute, comm_wait;  // likewise (time_split in timeline.h)
  Timeline last_timeline;                  // all ranks' events of the last timed iteration
};

// Called on every rank: before iteration `it` starts, and after it with its record.
struct IterationHooks {
  std::function<void(int it)> before = [](int) {};
  std::function<void(int it, const IterationRecord& rec)> after = [](int, const IterationRecord&) {};
};

// Runs iterations [first, iterations) (first > 0: continuing a checkpoint),
// those below `warmup` untimed.
TrainSeries run_iterations(Trainer& trainer, Communicator& world, int iterations, int warmup,
                           const IterationHooks& hooks, int first = 0);

// The measured result (valid on rank 0; other ranks only take part in the
// gathers), with every rank's place and own figures ("ranks"). `provenance` is the result's "run" block.
RunResult measured_result(const Config& cfg, const TrainSeries& series, const ProcessGroups& groups,
                          const Backend& backend, Communicator& world, nlohmann::json provenance);

}  // namespace ptdp
