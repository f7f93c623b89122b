// Trainer: construction of the rank's pieces and the iteration loop body.
#include "core/runtime/trainer.h"

#include <chrono>

#include "core/optim/lr_schedule.h"
#include "core/schedule/registry.h"

namespace ptdp {

Trainer::Trainer(const Config& cfg, Ops& ops, ProcessGroups& groups, const TokenSource& data,
                 const InitialWeights& initial)
    : cfg_(cfg), ops_(ops), groups_(groups), ctx_{ops, *groups.tp, cfg.model, cfg.plan} {
  model_ = std::make_unique<RankModel>(ctx_, groups.coord.pp);
  if (initial) initial(*model_);
  const ScheduleSpec spec{cfg.plan.pp, cfg.plan.micro_batches(), cfg.plan.virtual_stages, groups.coord.pp};
  program_ = build_program(cfg.plan.schedule, spec);
  if (cfg.plan.shards_gradients()) {
    parts_ = std::make_unique<ShardedParts>(ops, shard_layout(*model_, groups.dp->size()), *groups.dp,
                                            cfg.plan.shards_parameters());
    model_->attach(*parts_);
    sharded_ = std::make_unique<DistributedOptimizer>(ops, parts_->layout(), parts_->owned_grads(),
                                                      parts_->owned_weights(), *groups.dp, cfg.optimizer);
  } else if (cfg.plan.shards_optimizer()) {
    // The buckets the executor reduce-scatters: the same program, the same plan.
    std::vector<GradBucket> buckets = plan_reduction(*model_, program_, groups.dp->size()).buckets;
    sharded_ = std::make_unique<DistributedOptimizer>(ops, model_->params(), model_->grad_buffer(),
                                                      std::move(buckets), *groups.dp, cfg.optimizer);
  } else {
    optimizer_ = std::make_unique<AdamW>(ops, model_->params(), cfg.optimizer);
  }
  AdamW& adamw = sharded_ ? sharded_->adamw() : *optimizer_;
  executor_ = std::make_unique<Executor>(cfg, ops, *model_, adamw, groups, data, sharded_.get(), parts_.get());
}

std::vector<OwnedPiece> Trainer::state_pieces() const {
  if (sharded_) return sharded_->pieces();
  std::vector<OwnedPiece> out;
  for (Param* p : model_->params()) out.push_back({p, 0, 0, p->value.numel()});
  return out;
}

TrainingState Trainer::training_state() {
  return {cfg_, ops_, groups_.coord.dp, model(), optimizer(), state_pieces(), loss_scaler()};
}

IterationRecord Trainer::step(int iteration) {
  groups_.world->barrier();
  const auto t0 = std::chrono::steady_clock::now();
  const double lr = lr_at(cfg_.optimizer, iteration);
  IterationResult r = executor_->run(program_, static_cast<std::int64_t>(iteration) * cfg_.plan.global_batch, lr);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  last_timeline_ = std::move(r.timeline);
  IterationRecord rec;
  rec.own_seconds = seconds;
  rec.seconds = groups_.world->all_reduce_host(seconds, ReduceOp::max);
  // Every tensor-parallel rank of the last stage holds the same losses: count rank 0's.
  const bool counts = groups_.last_stage() && groups_.coord.tp == 0;
  const double loss_sum = groups_.world->all_reduce_host(counts ? r.loss_sum : 0.0, ReduceOp::sum);
  const double tokens = static_cast<double>(cfg_.plan.global_batch) * cfg_.model.seq_len;
  rec.loss = loss_sum / tokens;
  rec.grad_norm = r.grad_norm;
  rec.skipped = r.skipped;
  rec.loss_scale = r.loss_scale;
  rec.lr = lr;
  return rec;
}

}  // namespace ptdp
