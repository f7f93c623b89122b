// The distributed optimizer: owned pieces, the sharded step and the parameter gather.
#include "core/optim/distributed_optimizer.h"

#include <stdexcept>

#include "core/optim/grad_clip.h"

namespace ptdp {

namespace {

// Parameter p's elements as one row: (numel).
Tensor flat(const Tensor& t) { return t.view({t.numel()}); }

}  // namespace

DistributedOptimizer::DistributedOptimizer(Ops& ops, const ParamList& params, Tensor grads,
                                           std::vector<GradBucket> buckets, Communicator& dp,
                                           const OptimizerConfig& cfg)
    : ops_(ops), params_(params), grads_(std::move(grads)), buckets_(std::move(buckets)), dp_(dp) {
  owned_ = ops.zeros({grads_.numel() / dp.size()}, DType::f32);
  pieces_ = owned_pieces(params_, buckets_, dp.size(), dp.rank());
  make_adamw(Tensor{}, cfg);
}

DistributedOptimizer::DistributedOptimizer(Ops& ops, const ShardLayout& layout, Tensor owned, Tensor owned_weights,
                                           Communicator& dp, const OptimizerConfig& cfg)
    : ops_(ops), owned_(std::move(owned)), dp_(dp) {
  if (layout.dp != dp.size() || owned_.numel() * dp.size() != layout.size)
    throw std::invalid_argument("DistributedOptimizer: the owned buffer is not 1/d of the shard layout");
  for (const ShardUnit& u : layout.units) params_.insert(params_.end(), u.params.begin(), u.params.end());
  pieces_ = layout.owned_pieces(dp.rank());
  make_adamw(owned_weights, cfg);
}

// AdamW target i: owned piece i's weights (the parameter's elements, or
// ZeRO-3's owned weights) and its owned gradients.
void DistributedOptimizer::make_adamw(const Tensor& owned_weights, const OptimizerConfig& cfg) {
  std::vector<AdamWTarget> targets;
  for (const OwnedPiece& pc : pieces_) {
    Tensor value = owned_weights.defined() ? owned_weights.rows(pc.owned_offset, pc.count)
                                           : flat(pc.param->value).rows(pc.param_offset, pc.count);
    targets.push_back({value, owned_.rows(pc.owned_offset, pc.count), pc.param->weight_decay});
  }
  adamw_ = std::make_unique<AdamW>(ops_, std::move(targets), cfg);
}

double DistributedOptimizer::grad_norm(Communicator& model_parallel) {
  std::vector<Tensor> rows;  // keeps the views alive for the pointers below
  rows.reserve(pieces_.size());
  for (const OwnedPiece& pc : pieces_)
    if (pc.param->count_in_norm) rows.push_back(owned_.rows(pc.owned_offset, pc.count));
  std::vector<const Tensor*> counted;
  for (const Tensor& t : rows) counted.push_back(&t);
  return global_norm(ops_, counted, {&dp_, &model_parallel});
}

// The updated fp32 owned weights replace the owned gradients (spent), then
// each bucket's blocks are gathered into the gradient buffer: (c/d) → (c).
void DistributedOptimizer::step(double lr) {
  adamw_->step(lr);
  for (std::size_t i = 0; i < pieces_.size(); ++i) {
    Tensor dst = owned_.rows(pieces_[i].owned_offset, pieces_[i].count);
    ops_.copy(adamw_->master(i), dst);
  }
  const std::int64_t dp = dp_.size();
  if (!grads_.defined()) return;  // ZeRO-2/3: ShardedParts
  for (const GradBucket& b : buckets_)
    gathers_.push_back(dp_.all_gather_overlapped(owned_.rows(b.offset / dp, b.count / dp).raw(),
                                                 grads_.rows(b.offset, b.count).raw(), b.count / dp, DType::f32));
}

void DistributedOptimizer::finish_param_gather() {
  if (gathers_.empty()) return;
  for (auto& r : gathers_) r->wait();
  gathers_.clear();
  for (Param* p : params_) {  // p->grad now holds p's gathered fp32 weights
    if (p->value.dtype() == DType::f32) ops_.copy(p->grad, p->value);
    else ops_.cast(p->grad, p->value);
  }
}

}  // namespace ptdp
