// What a checkpoint holds and how many bytes it takes: one definition, for the
// projection of save and load times (core/sim/checkpoint_cost.h) and for the
// runtime's shards to be checked against.
//
// Per parameter element (docs/projection.md, "Checkpoints", derives it): the
// weights in the compute type (2 bytes in bf16/fp16, 4 in fp32), the fp32
// master copy beside 16-bit weights (4) and Adam's fp32 moments m and v (4 + 4):
// 14 bytes under a 16-bit plan, 12 under fp32 (the weights are the masters).
// Gradients and activations are not saved. Each tensor-parallel rank of each
// pipeline stage has its shard: its weights (memory_model.h's
// rank_parameter_count, so the layernorms replicated over t count, as every
// rank saves what it holds), less the last stage's copy of the tied word
// embedding, which equals the first stage's and is not saved.
// Data-parallel replicas hold the same state, so one copy is saved: by
// data-parallel rank 0, or, with the distributed optimizer, by each rank its
// 1/d: the weights and fp32 state of the pieces it owns.
// Letters: t, p, d parallel sizes; r pipeline rank; k data-parallel rank.
#pragma once
#include <cstdint>
#include <vector>

#include "core/accounting/activation_bytes.h"
#include "core/config/config.h"

namespace ptdp {

// Bytes of checkpoint state per parameter element: 14 with 16-bit weights and
// fp32 masters, 12 in fp32.
int checkpoint_bytes_per_parameter(const MemoryTraits& tr);

// Allowance per file a rank writes for what is not tensor data: the file's
// header (a safetensors header names ~100 tensors at ~100-200 bytes each on a
// rank of the paper's models) and the scalars of the training state (step,
// loss scale, data position, RNG seeds). An upper bound, not a prediction: the
// runtime's files hold exactly the state bytes plus at most this.
inline constexpr std::int64_t kCheckpointMetadataBytes = std::int64_t{64} << 10;

struct CheckpointSize {
  int bytes_per_parameter = 0;
  int dp = 1;                              // d: data-parallel ranks per stage
  bool sharded_state = false;              // the distributed optimizer: fp32 state over d
  std::vector<std::int64_t> weight_bytes;  // per pipeline rank r: one tensor-parallel rank's weights
  std::vector<std::int64_t> state_bytes;   // per r: its fp32 state (masters beside 16-bit weights, m, v)
  std::int64_t bytes_total = 0;            // one copy of every shard, metadata included: what a save writes
  std::int64_t bytes_per_rank_max = 0;     // the most one rank writes

  // State bytes rank (tp, k, r) writes, without metadata (0: it writes nothing).
  std::int64_t saved_state(int pp_rank, int dp_rank) const;
  // What it writes, metadata included: saved_state + kCheckpointMetadataBytes when it writes.
  std::int64_t saved_by(int pp_rank, int dp_rank) const;
  // What it reads back to resume: its weights, and its fp32 state (whole, or its 1/d).
  std::int64_t loaded_by(int pp_rank, int dp_rank) const;
};

// The checkpoint of (model, plan) with `tr`'s weight type and masters
// (memory_traits(machine, plan), as the runtime keeps them).
CheckpointSize checkpoint_size(const Model& m, const Plan& p, const MemoryTraits& tr);
CheckpointSize checkpoint_size(const Config& cfg);

}  // namespace ptdp
