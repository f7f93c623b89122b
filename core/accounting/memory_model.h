// The memory model of one rank, for the measured and the projected result
// alike: one walk over the rank's chunks and the micro-batches its schedule
// keeps alive, adding parameters, gradients and optimizer state. Only the
// per-layer activation bytes (and the embedding's and output layer's) differ,
// by the formula chosen (activation_bytes.h): ptdp's own tensors for a
// measured run, Korthikanti et al.'s for the paper's software in projections.
//
// Margin against a measured run (tests/unit/test_memory_model_peak.cpp): with
// the ptdp formula the model is a lower bound of the allocator's peak, short
// of it by what lives only inside one pass, at most
//   W = n·e·(max(4h + 4h/t, V'/t + 2h) + 2h) + m·2·n·4 bytes:
// a layer's backward temporaries (dy, dx2, dattn, dqkv, dln1, dx) or the
// output layer's (dlogits (n, V'/t) beside dlnf and dx), the (b, s, h)
// transfers of one schedule step, and the m micro-batches' (b, s) int32 tokens
// and targets. None grows with the micro-batches in flight.
// Letters: b micro-batch, s sequence, n = b·s, h hidden, V' padded vocabulary,
// t tensor-parallel size, m micro-batches, e bytes of an activation element.
#pragma once
#include <cstdint>
#include <vector>

#include "core/accounting/activation_bytes.h"
#include "core/config/chunk_layout.h"
#include "core/config/machine.h"
#include "core/config/model.h"
#include "core/config/plan.h"
#include "core/schedule/instruction.h"

namespace ptdp {

// The traits of `machine`'s device running `plan` (what a projection assumes).
MemoryTraits memory_traits(const Machine& machine, const Plan& plan);

struct MemoryBreakdown {
  std::int64_t params = 0;       // weights (this rank's shards; under ZeRO-3 the owned and gathered parts)
  std::int64_t grads = 0;        // fp32 gradients (ZeRO-2/3: the owned shard and one unit's in flight)
  std::int64_t optimizer = 0;    // fp32 moments (and masters), over d from dp_sharding optimizer on
  std::int64_t activations = 0;  // peak over the iteration of what micro-batches keep
  std::int64_t total() const { return params + grads + optimizer + activations; }
};

// Every count below takes the rank's sizes `r` (RankDims of (m, p)) from its
// caller, which builds them once.

// Parameter elements held by pipeline rank `pp_rank` (one tensor-parallel shard).
std::int64_t rank_parameter_count(const Model& m, const Plan& p, const RankDims& r, int pp_rank);
// One decoder layer's shard on a tensor-parallel rank (kv replicated on t/g
// ranks when t > g, norms and row-parallel biases replicated on every rank).
std::int64_t layer_shard_parameter_count(const Model& m, const RankDims& r);
// The same for one chunk: its layers, and the embedding or head it holds.
std::int64_t chunk_parameter_count(const Model& m, const RankDims& r, const ChunkLayout& l);

// The largest unit the data-parallel group gathers or reduce-scatters at once
// on `pp_rank` when it shards gradients or parameters (FSDP's unit, one per
// decoder layer as FSDP wraps each block, and one for the embedding and the head):
// parameter elements of one layer's shard, or of the embedding's or the head's.
std::int64_t shard_unit_parameter_count(const Model& m, const Plan& p, const RankDims& r, int pp_rank);

// Weights, gradients and optimizer state of `params` parameter elements by
// plan.dp_sharding (d = plan.dp, owned = ceil(params/d), u = `unit`):
//   none       weights params·e, gradients params·4, state params·(8 + 4 masters);
//   optimizer  state over d; gradients params·4 + the runtime's owned buffer params·4/d;
//   gradients  and gradients owned·4 + u·e: the owned fp32 shard, and one unit's
//              gradient in the compute type while it is reduce-scattered (every
//              micro-batch, core/sim/sharded_comm.h: it is never held whole);
//   parameters and weights (owned + 2u)·e: the owned shard, the unit in use and the
//              next one, prefetched (FSDP's forward and backward prefetch).
// Sharded counts never pass the unsharded ones.
struct StateBytes {
  std::int64_t params = 0, grads = 0, optimizer = 0;
};
StateBytes state_bytes(const Plan& p, const MemoryTraits& tr, std::int64_t params, std::int64_t unit);

// The most bytes alive at once while `program` runs, when a forward of chunk c
// makes chunk_bytes[c] alive until the backward (or B) of the same (mb, c), and
// a B makes deferred[c] alive until its W; a backward or B also holds
// backward_transient while it runs.
// A zero-bubble W's holdings on one chunk: the most that B has made for it
// beside the activations while B runs, and all that W holds once B is done
// (every layer's output gradients and GEMM inputs).
struct DeferredBytes {
  std::int64_t in_b = 0;
  std::int64_t held = 0;
};
std::int64_t peak_alive_bytes(const Program& program, const std::vector<std::int64_t>& chunk_bytes,
                              const std::vector<DeferredBytes>& deferred = {}, std::int64_t backward_transient = 0);

// The whole breakdown for `pp_rank`, whose iteration is `program` (for the
// activations alive at its peak), with activations by `formula`.
MemoryBreakdown memory_model(const Model& m, const Plan& p, const RankDims& r, const MemoryTraits& tr,
                             ActivationFormula formula, int pp_rank, const Program& program);

// memory_model() of every pipeline rank r, whose iteration is programs[r].
std::vector<MemoryBreakdown> memory_per_stage(const Model& m, const Plan& p, const RankDims& r, const MemoryTraits& tr,
                                              ActivationFormula formula, const std::vector<Program>& programs);

// Bytes above every count memory_model() makes for (m, p), by either formula:
// 20 bytes a parameter element (weights, fp32 masters, gradients, two moments)
// and, on a rank, every micro-batch's chunks alive at once (≤ m·v, plus one
// layer recomputed), each with all l layers and the embedding and head, each
// of those at most 8 bytes an element of (n, 5h + f + V' + 2·a·s + 8) (SwiGLU:
// 2f for its gate and up). Parameters per layer at most 4h² + 3hf + 2f + 10h. In long
// double from the raw fields, so it cannot overflow itself: memory_model()
// counts in int64 and is asked only where this stays below 2^62.
long double memory_model_bound(const Model& m, const Plan& p);

// Whether `total` bytes fit a device of `machine` (memory minus what the
// profile reserves for the CUDA context and communication buffers).
bool fits(const Machine& machine, std::int64_t total);

}  // namespace ptdp
