// Building a rank's chunks, its parameter list and its flat gradient buffer.
#include "core/model/rank_model.h"

#include <set>

namespace ptdp {

RankModel::RankModel(ModelContext& ctx, int pp_rank) : ctx_(ctx) {
  Param* first_word = nullptr;
  for (int c = 0; c < ctx.plan.virtual_stages; ++c) {
    const ChunkLayout layout = chunk_layout(ctx.model, ctx.plan, pp_rank, c);
    chunks_.push_back(std::make_unique<ModelChunk>(ctx, layout, first_word));
    if (chunks_.back()->embedding()) first_word = &chunks_.back()->embedding()->word();
  }
  if (ctx.plan.pp > 1 && ctx.model.tied_embeddings) {
    for (auto& chunk : chunks_) {
      if (chunk->embedding()) tied_word_ = &chunk->embedding()->word();
      if (chunk->head()) tied_word_ = &chunk->head()->word();
    }
  }
  collect_params();
  // The distributed optimizer reduce-scatters buckets in d equal blocks;
  // sharded gradients are never held whole (core/optim/sharded_parts.h).
  if (!ctx.plan.shards_gradients())
    grads_ = pack_grads(ctx.ops, params_, ctx.plan.shards_optimizer() ? ctx.plan.dp : 1);
}

void RankModel::attach(PartResidency& residency) {
  for (std::size_t c = 0; c < chunks_.size(); ++c) chunks_[c]->attach(&residency, static_cast<int>(c));
}

void RankModel::collect_params() {
  std::set<Param*> seen;
  for (auto& chunk : chunks_)
    for (Param* p : chunk->params())
      if (seen.insert(p).second) params_.push_back(p);
}

void RankModel::zero_grads() {
  if (grads_.defined()) ctx_.ops.zero(grads_);
}

std::int64_t RankModel::num_parameters() const {
  std::int64_t n = 0;
  for (const Param* p : params_) n += p->numel();
  return n;
}

}  // namespace ptdp
