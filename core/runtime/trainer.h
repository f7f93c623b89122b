// The trainer: builds this rank's model, optimizer and instruction list from a
// validated config, and runs iterations. Collective over all ranks of `groups`.
#pragma once
#include <functional>
#include <memory>

#include "core/checkpoint/training_state.h"
#include "core/runtime/executor.h"

namespace ptdp {

struct IterationRecord {
  double seconds = 0;    // slowest rank's wall time for the iteration
  double own_seconds = 0;  // this rank's own wall time for it
  double loss = 0;       // mean loss over the global batch's tokens
  double grad_norm = 0;  // global gradient norm before clipping
  bool skipped = false;  // fp16 overflow skipped the optimizer step
  double loss_scale = 1;
  double lr = 0;         // the learning rate the optimizer stepped with (lr_at)
};

// Sets the model's starting weights (an import), after the seeded
// initialisation and before the optimizer takes its copies of them.
using InitialWeights = std::function<void(RankModel&)>;

class Trainer {
 public:
  // `initial` (may be empty: the seeded weights) runs on this rank's model.
  Trainer(const Config& cfg, Ops& ops, ProcessGroups& groups, const TokenSource& data,
          const InitialWeights& initial = {});

  // Runs iteration `iteration` (0-based; its samples start at iteration·B).
  IterationRecord step(int iteration);

  const Timeline& last_timeline() const { return last_timeline_; }
  const Program& program() const { return program_; }
  // The model with the last step's weights in place (waits for the
  // distributed optimizer's parameter gather).
  RankModel& model() {
    executor_->finish_param_gather();
    if (parts_) parts_->materialize();  // ZeRO-3: whole weights until the next step
    return *model_;
  }
  const AdamW& optimizer() const { return sharded_ ? sharded_->adamw() : *optimizer_; }
  AdamW& optimizer() { return sharded_ ? sharded_->adamw() : *optimizer_; }
  // What AdamW target i updates: the whole parameter i, or (data-parallel
  // sharding) owned piece i. A checkpoint names the state by these.
  std::vector<OwnedPiece> state_pieces() const;
  // What a checkpoint saves and restores (core/checkpoint/checkpoint.h); waits as model() does.
  TrainingState training_state();
  LossScaler& loss_scaler() { return executor_->loss_scaler(); }
  // Testing aid: this rank's forwards and backwards take `factor` times as long (Executor).
  void set_compute_slowdown(double factor) { executor_->set_compute_slowdown(factor); }
  const Config& config() const { return cfg_; }
  Ops& ops() { return ops_; }
  ProcessGroups& groups() { return groups_; }

 private:
  const Config& cfg_;
  Ops& ops_;
  ProcessGroups& groups_;
  ModelContext ctx_;
  std::unique_ptr<RankModel> model_;
  std::unique_ptr<AdamW> optimizer_;               // null with the distributed optimizer
  std::unique_ptr<ShardedParts> parts_;            // ZeRO-2/3's residency; null without
  std::unique_ptr<DistributedOptimizer> sharded_;  // null without
  std::unique_ptr<Executor> executor_;
  Program program_;
  Timeline last_timeline_;
};

}  // namespace ptdp
