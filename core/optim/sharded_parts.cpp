// ZeRO-2/3's residency: transient gradient units reduce-scattered into the
// owned gradients, weight units all-gathered around each use.
#include "core/optim/sharded_parts.h"

#include <stdexcept>

#include "core/comm/tensor_collectives.h"

namespace ptdp {

ShardedParts::ShardedParts(Ops& ops, ShardLayout layout, Communicator& dp, bool shard_weights)
    : ops_(ops), layout_(std::move(layout)), dp_(dp), shard_weights_(shard_weights), units_(layout_.units.size()) {
  if (layout_.dp != dp.size())
    throw std::invalid_argument("ShardedParts: the layout is not for this data-parallel group");
  pieces_ = layout_.owned_pieces(dp.rank());
  owned_grads_ = ops.zeros({layout_.size / dp.size()}, DType::f32);
  if (!shard_weights || layout_.units.empty()) return;
  owned_weights_ = ops.zeros({layout_.size / dp.size()}, layout_.units.front().params.front()->value.dtype());
  materialized_ = true;  // every value is whole now: begin_iteration's release copies the owned blocks out
  begin_iteration();
}

Tensor ShardedParts::owned_block(const Tensor& owned, int u) const {
  const ShardUnit& s = layout_.units[static_cast<std::size_t>(u)];
  return owned.rows(s.offset / layout_.dp, s.count / layout_.dp);
}

bool ShardedParts::needs_weights(int part, PartPass pass) const {
  return shard_weights_ && !(pass == PartPass::backward && part == ChunkPart::kEmbedding);
}

void ShardedParts::enter(int chunk, int part, PartPass pass) {
  while (!flushes_.empty() && flushes_.front().request->test()) complete_oldest_flush();
  const PartUnits& pu = layout_.part(chunk, part);
  if (needs_weights(part, pass)) {
    for (int u : pu.units) acquire_weights(u);
    const int next = layout_.next_part(chunk, part, pass == PartPass::forward);
    if (next != ShardLayout::kNoPart && needs_weights(next, pass))
      for (int u : layout_.part(chunk, next).units) issue_gather(u);  // prefetch: lands while this part computes
  }
  if (pass != PartPass::forward)
    for (int u : pu.units) bind_grads(u);
}

void ShardedParts::leave(int chunk, int part, PartPass pass) {
  const PartUnits& pu = layout_.part(chunk, part);
  if (needs_weights(part, pass))
    for (int u : pu.units) release_weights(u);
  if (pass != PartPass::forward)
    for (int u : pu.flush) flush(u);
}

void ShardedParts::bind_grads(int u) {
  Unit& s = units_[static_cast<std::size_t>(u)];
  if (s.grads.defined()) return;
  const ShardUnit& su = layout_.units[static_cast<std::size_t>(u)];
  s.grads = ops_.zeros({su.count}, DType::f32);
  for (std::size_t i = 0; i < su.params.size(); ++i)
    su.params[i]->grad = s.grads.rows(su.at[i], su.params[i]->numel()).view(su.params[i]->shard_shape());
}

// (c) → (c/d): this rank's block of the unit summed over dp, added into the owned gradients once it lands.
void ShardedParts::flush(int u) {
  Unit& s = units_[static_cast<std::size_t>(u)];
  if (!s.grads.defined()) return;
  const ShardUnit& su = layout_.units[static_cast<std::size_t>(u)];
  Tensor received = ops_.empty({su.count / layout_.dp}, DType::f32);
  flushes_.push_back({dp_.reduce_scatter_overlapped(s.grads.raw(), received.raw(), received.numel(), DType::f32,
                                                    ReduceOp::sum),
                      s.grads, received, u});
  for (Param* p : su.params) p->grad = Tensor{};
  s.grads = Tensor{};
  while (flushes_.size() > kFlushesInFlight) complete_oldest_flush();
}

// In issue order, so the owned sums are the same whatever the timing.
void ShardedParts::complete_oldest_flush() {
  Flush& f = flushes_.front();
  f.request->wait();
  Tensor mine = owned_block(owned_grads_, f.unit);
  ops_.add(mine, f.received, mine);
  flushes_.pop_front();
}

void ShardedParts::issue_gather(int u) {
  Unit& s = units_[static_cast<std::size_t>(u)];
  if (s.weights.defined()) return;  // gathered or on its way
  const ShardUnit& su = layout_.units[static_cast<std::size_t>(u)];
  s.weights = ops_.empty({su.count}, owned_weights_.dtype());
  s.gather = dp_.all_gather_overlapped(owned_block(owned_weights_, u).raw(), s.weights.raw(), su.count / layout_.dp,
                                       owned_weights_.dtype());
}

void ShardedParts::acquire_weights(int u) {
  Unit& s = units_[static_cast<std::size_t>(u)];
  if (s.users++ > 0) return;
  issue_gather(u);
  if (s.gather) s.gather->wait();
  s.gather.reset();
  const ShardUnit& su = layout_.units[static_cast<std::size_t>(u)];
  for (std::size_t i = 0; i < su.params.size(); ++i)
    su.params[i]->value = s.weights.rows(su.at[i], su.params[i]->numel()).view(su.params[i]->shard_shape());
}

void ShardedParts::release_weights(int u) {
  Unit& s = units_[static_cast<std::size_t>(u)];
  if (--s.users > 0) return;
  for (Param* p : layout_.units[static_cast<std::size_t>(u)].params) p->value = Tensor{};
  s.weights = Tensor{};
}

void ShardedParts::begin_iteration() {
  if (!flushes_.empty()) throw std::logic_error("ShardedParts: the previous iteration's gradients were not finished");
  if (materialized_) {
    for (const OwnedPiece& pc : pieces_) {
      Tensor dst = owned_weights_.rows(pc.owned_offset, pc.count);
      ops_.copy(pc.param->value.view({pc.param->numel()}).rows(pc.param_offset, pc.count), dst);
    }
    for (ShardUnit& su : layout_.units)
      for (Param* p : su.params) p->value = Tensor{};
    for (Unit& s : units_) s = Unit{};
    materialized_ = false;
  }
  ops_.zero(owned_grads_);
}

void ShardedParts::finish_gradients() {
  for (std::size_t u = 0; u < units_.size(); ++u) flush(static_cast<int>(u));
  while (!flushes_.empty()) complete_oldest_flush();
  for (Unit& s : units_)  // a prefetch no part used
    if (s.users == 0 && s.weights.defined()) {
      if (s.gather) s.gather->wait();
      s.gather.reset();
      s.weights = Tensor{};
    }
}

void ShardedParts::reduce_tied(const Param* word, Communicator& embedding_group) {
  if (word == nullptr) return;
  finish_gradients();
  Tensor mine = owned_block(owned_grads_, layout_.unit_of.at(word));
  all_reduce(embedding_group, mine);
}

void ShardedParts::install_weights(const Tensor& owned) {
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const ShardUnit& su = layout_.units[u];
    Tensor whole = ops_.empty({su.count}, DType::f32);
    dp_.all_gather(owned_block(owned, static_cast<int>(u)).raw(), whole.raw(), su.count / layout_.dp, DType::f32);
    for (std::size_t i = 0; i < su.params.size(); ++i) {
      Param& p = *su.params[i];
      Tensor dst = p.value.view({p.numel()});
      const Tensor src = whole.rows(su.at[i], p.numel());
      if (dst.dtype() == DType::f32) ops_.copy(src, dst);
      else ops_.cast(src, dst);
    }
  }
}

void ShardedParts::materialize() {
  if (!shard_weights_ || materialized_) return;
  for (std::size_t u = 0; u < units_.size(); ++u) acquire_weights(static_cast<int>(u));
  materialized_ = true;
}

}  // namespace ptdp
