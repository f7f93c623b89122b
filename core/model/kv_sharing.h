// The key/value projection's split over the tensor-parallel group. With t ≤ g
// its (g·2·d, h) rows, laid out (g, 2, d), are split like any column-parallel
// weight: g/t whole kv heads a rank. With t > g (more ranks than kv heads) each
// group of t/g consecutive ranks shares one kv head: every rank of the group
// holds that head's (2·d, h) rows (ShardSpec {0, g, rank/(t/g)}), computes its
// keys and values, and a part of its gradient (from the group's query heads
// on this rank): the parts are summed over the group every micro-batch, so each
// copy holds the single-rank gradient; the first rank of a group counts it in
// the gradient norm and writes it to checkpoints. Letters: g kv heads, t
// tensor-parallel size, d head dim, h hidden.
#pragma once
#include "core/model/model_context.h"
#include "core/model/param.h"

namespace ptdp {

// t > g: every rank holds its group's kv head.
inline bool kv_shared(const ModelContext& ctx) { return ctx.t() > ctx.model.kv(); }

// How kv.weight (and kv.bias) split: over t, or shared by groups of t/g ranks.
ShardSpec kv_shard(const ModelContext& ctx);

// Before a micro-batch adds to the shared parameters' gradients: all but the
// first rank of each group zero theirs (the copies are equal, the first keeps
// the sum so far), so the sum after it counts every earlier micro-batch once.
void begin_shared_kv_grads(ModelContext& ctx, const ParamList& shared);

// After: each gradient summed over its group. One all-reduce over the whole
// tensor-parallel group of a (g, …) buffer in which each rank fills its
// group's slot (g times the data of a group all-reduce, and no extra
// communicator; t > g is rare, t ≤ 8 and g ≥ 8 in Llama 3).
void sum_shared_kv_grads(ModelContext& ctx, const ParamList& shared);

}  // namespace ptdp
