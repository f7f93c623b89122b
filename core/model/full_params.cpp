// Full parameters in and out of a rank's shards; see full_params.h.
#include "core/model/full_params.h"

#include <cmath>
#include <stdexcept>

namespace ptdp {

namespace {

void check_full_shape(const std::string& name, const Shape& want, const Shape& got) {
  if (want != got)
    throw std::invalid_argument("parameter " + name + " is " + shape_string(want) + " in the model but " +
                                shape_string(got) + " in the weights given");
}

// The rank's own copy of `name`, or null (another stage holds it, or this copy does not count).
const Param* owned_copy(const RankModel& model, const std::string& name, int dp_rank) {
  if (dp_rank != 0) return nullptr;
  for (const Param* p : model.params())
    if (p->name == name && p->count_in_norm && !p->tied_copy) return p;
  return nullptr;
}

}  // namespace

void load_full_params(RankModel& model, Ops& ops, const FullParams& full) {
  for (Param* p : model.params()) {
    const auto it = full.find(p->name);
    if (it == full.end()) throw std::invalid_argument("the weights given have no parameter " + p->name);
    check_full_shape(p->name, p->full_shape, it->second.shape);
    std::vector<float> shard(static_cast<std::size_t>(p->value.numel()));
    for (std::size_t i = 0; i < shard.size(); ++i)
      shard[i] = it->second.values[static_cast<std::size_t>(p->full_index(static_cast<std::int64_t>(i)))];
    ops.upload_f32(shard.data(), p->value);
  }
  ops.synchronize();
}

FullParams gather_full_params(const RankModel& model, Ops& ops, Communicator& world, int dp_rank,
                              const std::vector<ParamShape>& names) {
  FullParams out;
  for (const ParamShape& n : names) {
    FullTensor& t = out[n.name];
    t.shape = n.shape;
    t.values.assign(static_cast<std::size_t>(shape_numel(n.shape)), 0.0f);
    const Param* p = owned_copy(model, n.name, dp_rank);
    // Every rank learns whether the elements are each written once (NaN: a shape mismatch somewhere).
    const bool fits = p == nullptr || p->full_shape == n.shape;
    const double mine = p == nullptr ? 0.0 : fits ? static_cast<double>(p->value.numel()) : std::nan("");
    if (world.all_reduce_host(mine, ReduceOp::sum) != static_cast<double>(t.values.size())) {
      if (!fits) check_full_shape(n.name, p->full_shape, n.shape);
      throw std::invalid_argument("parameter " + n.name + " (" + shape_string(n.shape) +
                                  ") is not held exactly once by the model's ranks");
    }
    if (p != nullptr) {
      std::vector<float> shard(static_cast<std::size_t>(p->value.numel()));
      ops.download_f32(p->value, shard.data());
      for (std::size_t i = 0; i < shard.size(); ++i)
        t.values[static_cast<std::size_t>(p->full_index(static_cast<std::int64_t>(i)))] = shard[i];
    }
    world.all_reduce(t.values.data(), static_cast<std::int64_t>(t.values.size()), DType::f32, ReduceOp::sum);
  }
  return out;
}

}  // namespace ptdp
