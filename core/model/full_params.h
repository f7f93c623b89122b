// Full (unsharded) parameters as host fp32 tensors by ptdp name: what an
// interchange format (core/checkpoint/hf_gpt2.h) reads and writes, whatever the
// parallel layout. A rank takes its shard of each by Param::full_index; an
// export gathers the shards of every rank back into the full tensors.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/comm/communicator.h"
#include "core/model/rank_model.h"

namespace ptdp {

struct FullTensor {
  Shape shape;                // the parameter's full shape (Param::full_shape)
  std::vector<float> values;  // shape_numel(shape) values, row-major
};
using FullParams = std::map<std::string, FullTensor>;

// A parameter's name and full shape.
struct ParamShape {
  std::string name;
  Shape shape;
};

// Every parameter of `model` from `full`: each rank's shard by full index,
// converted to the compute dtype. Throws std::invalid_argument naming a
// parameter that `full` lacks or holds at another shape.
void load_full_params(RankModel& model, Ops& ops, const FullParams& full);

// The full tensors of `names`, assembled over `world` (every rank of the run,
// a host communicator): each element is written by the one rank that holds it
// and counts it (data-parallel rank `dp_rank` 0, Param::count_in_norm: the
// tensor-parallel rank 0 copy of a replicated parameter, never a tied copy);
// the others add zeros, so the sum is exact. Collective over `world`, with the
// same `names` everywhere; every rank gets the result. Throws
// std::invalid_argument when a parameter of `model` has another full shape.
FullParams gather_full_params(const RankModel& model, Ops& ops, Communicator& world, int dp_rank,
                              const std::vector<ParamShape>& names);

}  // namespace ptdp
