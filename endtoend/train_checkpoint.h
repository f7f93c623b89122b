// `ptdp train --save/--load`: the checks that refuse a checkpoint option
// before any work, and a run's saves and load with their measured figures
// (metrics.checkpoint). The format: docs/checkpoint-format.md.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/checkpoint/checkpoint.h"
#include "core/results/result.h"
#include "core/runtime/trainer.h"
#include "endtoend/train_run.h"

namespace ptdp::cli {

// Problems of --save, --save-every, --keep, --overwrite and --load (rank 0
// runs it: --load reads and checks every shard; --save's entries that a save
// would write through a link, or a folder ptdp did not make that it would
// write into, checkpoint_folders.h). Each names the option and the file.
ConfigErrors check_checkpoint_args(const TrainArgs& a, const Config& cfg);

// One run's checkpointing: the load before the first iteration, the saves
// after iterations, and their figures. Collective over `host` like training.
class CheckpointRun {
 public:
  CheckpointRun(const TrainArgs& args, Trainer& trainer, Communicator& host, std::string data);

  // Loads --load (if given); returns the first iteration to run (the checkpoint's step, else 0).
  int load();
  // After iteration `it` (0-based): saves when --save-every divides it + 1, or at the last iteration.
  void after_iteration(int it);
  // --iterations 0: saves the weights as initialised, as step 0 (nothing when --save is not given).
  void save_initial();
  // The figures of the saves and the load (nullopt when neither happened).
  std::optional<CheckpointMetrics> figures() const;

 private:
  void save(int step);

  const TrainArgs& args_;
  Trainer& trainer_;
  Communicator& host_;
  std::string data_;
  std::optional<CheckpointIo> loaded_;
  std::vector<CheckpointIo> saves_;
  std::vector<int> replace_;  // rank 0, --overwrite: the other run's checkpoints, until this run's first save
};

}  // namespace ptdp::cli
