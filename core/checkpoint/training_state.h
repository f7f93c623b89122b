// What a checkpoint saves of a training run and restores into one: the parts of
// this rank's trainer (Trainer::training_state(), core/runtime/trainer.h), by
// reference, so the checkpoint sits below the runtime that trains.
#pragma once
#include <vector>

#include "core/config/config.h"
#include "core/kernels/ops.h"
#include "core/model/rank_model.h"
#include "core/optim/adamw.h"
#include "core/optim/distributed_optimizer.h"
#include "core/optim/loss_scaler.h"

namespace ptdp {

struct TrainingState {
  const Config& config;
  Ops& ops;
  int dp_rank = 0;                // this rank's data-parallel coordinate
  RankModel& model;               // with the last step's weights in place (no gather pending)
  AdamW& optimizer;               // over `pieces`
  std::vector<OwnedPiece> pieces; // what AdamW target i updates: a whole parameter or an owned piece of one
  LossScaler& loss_scaler;
};

}  // namespace ptdp
