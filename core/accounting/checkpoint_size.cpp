// Checkpoint bytes per rank and in total; see checkpoint_size.h.
#include "core/accounting/checkpoint_size.h"

#include <algorithm>

#include "core/accounting/memory_model.h"

namespace ptdp {

namespace {

constexpr int kFp32Bytes = 4;
constexpr int kAdamMoments = 2;  // m and v, fp32 each

// Rank k's share of `bytes` split over d: the first bytes % d ranks take one more.
std::int64_t slice(std::int64_t bytes, int dp, int k) { return bytes / dp + (k < bytes % dp ? 1 : 0); }

}  // namespace

int checkpoint_bytes_per_parameter(const MemoryTraits& tr) {
  return tr.weight_bytes + (tr.master_weights ? kFp32Bytes : 0) + kAdamMoments * kFp32Bytes;
}

std::int64_t CheckpointSize::saved_state(int pp_rank, int dp_rank) const {
  const auto r = static_cast<std::size_t>(pp_rank);
  if (!sharded_state) return dp_rank == 0 ? weight_bytes[r] + state_bytes[r] : 0;
  return slice(weight_bytes[r] + state_bytes[r], dp, dp_rank);  // its owned pieces: weights and state
}

std::int64_t CheckpointSize::saved_by(int pp_rank, int dp_rank) const {
  const std::int64_t state = saved_state(pp_rank, dp_rank);
  return state > 0 ? state + kCheckpointMetadataBytes : 0;
}

std::int64_t CheckpointSize::loaded_by(int pp_rank, int dp_rank) const {
  const auto r = static_cast<std::size_t>(pp_rank);
  const std::int64_t state = sharded_state ? slice(state_bytes[r], dp, dp_rank) : state_bytes[r];
  return weight_bytes[r] + state + kCheckpointMetadataBytes;
}

CheckpointSize checkpoint_size(const Model& m, const Plan& p, const MemoryTraits& tr) {
  CheckpointSize c;
  c.bytes_per_parameter = checkpoint_bytes_per_parameter(tr);
  c.dp = p.dp;
  c.sharded_state = p.shards_optimizer() && p.dp > 1;
  const int state_per_parameter = c.bytes_per_parameter - tr.weight_bytes;
  // The last stage's copy of the tied word embedding (p > 1) equals the first
  // stage's after every step: it is not saved (core/checkpoint/checkpoint_save.cpp).
  const std::int64_t tied_copy = p.pp > 1 && m.tied_embeddings ? m.padded_vocab() / p.tp * m.hidden : 0;
  const RankDims dims(m, p);
  for (int r = 0; r < p.pp; ++r) {
    const std::int64_t params = rank_parameter_count(m, p, dims, r) - (r == p.pp - 1 ? tied_copy : 0);
    c.weight_bytes.push_back(params * tr.weight_bytes);
    c.state_bytes.push_back(params * state_per_parameter);
  }
  for (int r = 0; r < p.pp; ++r)
    for (int k = 0; k < p.dp; ++k) {
      const std::int64_t bytes = c.saved_by(r, k);
      c.bytes_total += bytes * p.tp;  // every tensor-parallel rank writes a shard of this size
      c.bytes_per_rank_max = std::max(c.bytes_per_rank_max, bytes);
    }
  return c;
}

CheckpointSize checkpoint_size(const Config& cfg) {
  return checkpoint_size(cfg.model, cfg.plan, memory_traits(cfg.machine, cfg.plan));
}

}  // namespace ptdp
