// The distributed optimizer: owned pieces, the sharded step and the parameter gather.
#include "core/optim/distributed_optimizer.h"

#include <algorithm>
#include <stdexcept>

#include "core/optim/grad_clip.h"

namespace ptdp {

namespace {

// Parameter p's elements as one row: (numel).
Tensor flat(const Tensor& t) { return t.view({t.numel()}); }

}  // namespace

std::vector<OwnedPiece> owned_pieces(const ParamList& params, std::vector<GradBucket> buckets, int dp, int r) {
  std::sort(buckets.begin(), buckets.end(), [](const GradBucket& a, const GradBucket& b) { return a.offset < b.offset; });
  std::vector<OwnedPiece> out;
  std::size_t i = 0;
  std::int64_t start = 0;  // buffer offset of params[i]
  for (const GradBucket& b : buckets) {
    if (b.count % dp != 0) throw std::invalid_argument("owned_pieces: a bucket is not a multiple of d");
    const std::int64_t block = b.count / dp, lo = b.offset + r * block, hi = lo + block;
    for (; i < params.size() && start + params[i]->value.numel() <= lo; ++i) start += params[i]->value.numel();
    std::int64_t first = start;  // params[k]'s offset
    for (std::size_t k = i; k < params.size() && first < hi; ++k) {
      const std::int64_t last = first + params[k]->value.numel();
      const std::int64_t a = std::max(first, lo), e = std::min(last, hi);
      if (e > a) out.push_back({params[k], a - first, b.offset / dp + (a - lo), e - a});
      first = last;
    }
  }
  return out;
}

DistributedOptimizer::DistributedOptimizer(Ops& ops, const ParamList& params, Tensor grads,
                                           std::vector<GradBucket> buckets, Communicator& dp,
                                           const OptimizerConfig& cfg)
    : ops_(ops), params_(params), grads_(std::move(grads)), buckets_(std::move(buckets)), dp_(dp) {
  owned_ = ops.zeros({grads_.numel() / dp.size()}, DType::f32);
  pieces_ = owned_pieces(params_, buckets_, dp.size(), dp.rank());
  std::vector<AdamWTarget> targets;
  for (const OwnedPiece& pc : pieces_)
    targets.push_back({flat(pc.param->value).rows(pc.param_offset, pc.count), owned_.rows(pc.owned_offset, pc.count),
                       pc.param->weight_decay});
  adamw_ = std::make_unique<AdamW>(ops, std::move(targets), cfg);
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
