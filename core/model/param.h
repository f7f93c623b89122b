// Parameters: a named tensor with its full (unsharded) shape, how it is split
// over the tensor-parallel group, its fp32 gradient, and how it is initialised.
// Every element's initial value is a pure function of (seed, name, full index)
// (Philox4x32-10 and Box-Muller, param_init.h), computed by the backend on its own
// device, so any parallel layout starts from exactly the single-rank weights.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/kernels/ops.h"

namespace ptdp {

// Which dimension is split over `parts` ranks and which part this rank holds.
struct ShardSpec {
  int dim = -1;    // -1: replicated on every tensor-parallel rank
  int parts = 1;   // t
  int index = 0;   // this rank's tensor-parallel rank
};

struct Param {
  std::string name;              // e.g. "layers.3.q.weight"
  Shape full_shape;              // unsharded shape
  ShardSpec shard;               // how it is split over the tensor-parallel group
  Tensor value;                  // this rank's shard, compute dtype
  Tensor grad;                   // same shape, fp32, accumulated over micro-batches
  bool weight_decay = false;     // AdamW decay applies (weight matrices only)
  bool count_in_norm = true;     // false for a copy another rank already counts
  bool tied_copy = false;        // the last stage's copy of the tied word embedding

  Shape shard_shape() const;
  // Elements of this rank's shard (also while `value` is not held: ZeRO-3).
  std::int64_t numel() const { return shape_numel(shard_shape()); }
  // Offset in the full tensor of element `local` of this shard (row-major).
  std::int64_t full_index(std::int64_t local) const;
};

// The Philox key of parameter `name` under `seed` (splitmix64 of seed ^ FNV-1a of the name).
philox::Key param_key(std::uint64_t seed, const std::string& name);
// How to fill `p`'s shard (key, std, kind and the shard geometry of Param::full_index).
ParamInit param_init(const Param& p, Init init, float std, std::uint64_t seed);
// The deterministic initial value of element `full_index` of parameter `name`.
float init_value(std::uint64_t seed, const std::string& name, std::int64_t full_index, Init init, float std);

// Creates a parameter and fills its shard; its gradient comes from pack_grads.
std::unique_ptr<Param> make_param(Ops& ops, std::string name, Shape full_shape, ShardSpec shard, Init init,
                                  float std, std::uint64_t seed, bool weight_decay);

using ParamList = std::vector<Param*>;

// One zeroed fp32 buffer for all gradients of `params`; each Param::grad
// becomes a view into it (in list order). Returns the buffer, padded with
// zeros to a multiple of `align` elements (the distributed optimizer: d).
Tensor pack_grads(Ops& ops, const ParamList& params, std::int64_t align = 1);

}  // namespace ptdp
