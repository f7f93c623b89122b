// The memory model of one rank: parameters, gradients, optimizer state and the
// activations alive at the schedule's peak, counted from the tensors ptdp's
// model really keeps (see core/model/transformer_layer.h), so a run's measured
// peak can be held against it. Letters: b micro-batch, s sequence, h hidden,
// a heads, f MLP inner size, V vocabulary, t tensor-parallel size.
#pragma once
#include <cstdint>
#include <vector>

#include "core/config/model.h"
#include "core/config/plan.h"
#include "core/schedule/instruction.h"
#include "core/tensor/dtype.h"

namespace ptdp {

// Element sizes and kernel choices that decide the bytes held.
struct MemoryTraits {
  int weight_bytes = 4;             // weights and activations: 4 fp32, 2 bf16/fp16
  bool master_weights = false;      // fp32 master copy beside 16-bit weights
  bool scores_materialized = true;  // unfused attention keeps probabilities (b, a/t, s, s) fp32;
                                    // fused keeps one fp32 log-sum-exp per (token, head)
};
MemoryTraits memory_traits(Device device, Precision precision, bool fused_attention);

struct MemoryBreakdown {
  std::int64_t params = 0;       // weights (this rank's shards)
  std::int64_t grads = 0;        // fp32 gradients
  std::int64_t optimizer = 0;    // fp32 moments (and masters)
  std::int64_t activations = 0;  // peak over the iteration of what micro-batches keep
  std::int64_t total() const { return params + grads + optimizer + activations; }
};

// Parameter elements held by pipeline rank `pp_rank` (one tensor-parallel shard).
std::int64_t rank_parameter_count(const Model& m, const Plan& p, int pp_rank);

// Bytes one layer keeps for one micro-batch between forward and backward.
std::int64_t layer_activation_bytes(const Model& m, const Plan& p, const MemoryTraits& tr);
// Bytes the output layer keeps for one micro-batch (last stage).
std::int64_t head_activation_bytes(const Model& m, const Plan& p, const MemoryTraits& tr);

// The most bytes alive at once while `program` runs, when a forward of chunk c
// makes chunk_bytes[c] alive until the backward of the same (mb, c).
std::int64_t peak_alive_bytes(const Program& program, const std::vector<std::int64_t>& chunk_bytes);

// The whole breakdown for `pp_rank`, whose iteration is `program` (for the
// activations alive at its peak).
MemoryBreakdown memory_model(const Model& m, const Plan& p, const MemoryTraits& tr, int pp_rank,
                             const Program& program);

}  // namespace ptdp
