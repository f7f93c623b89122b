// Parameter shards and the keys and geometry of their counter-based initialisation.
#include "core/model/param.h"

#include <stdexcept>

namespace ptdp {

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t hash_name(const std::string& name) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

Shape Param::shard_shape() const {
  Shape s = full_shape;
  if (shard.dim >= 0) s[static_cast<std::size_t>(shard.dim)] /= shard.parts;
  return s;
}

std::int64_t Param::full_index(std::int64_t local) const {
  return init_full_index(param_init(*this, Init::zeros, 0, 0), local);
}

philox::Key param_key(std::uint64_t seed, const std::string& name) {
  const std::uint64_t k = splitmix64(seed ^ hash_name(name));
  return philox::Key{{static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32)}};
}

ParamInit param_init(const Param& p, Init init, float std, std::uint64_t seed) {
  ParamInit how;
  how.kind = init;
  how.std = std;
  if (init == Init::normal) how.key = param_key(seed, p.name);
  if (p.shard.dim < 0) return how;
  const auto dim = static_cast<std::size_t>(p.shard.dim);
  how.split = true;
  for (std::size_t i = dim + 1; i < p.full_shape.size(); ++i) how.inner *= p.full_shape[i];
  how.full_dim = p.full_shape[dim];
  how.chunk = how.full_dim / p.shard.parts;
  how.first = p.shard.index * how.chunk;
  return how;
}

float init_value(std::uint64_t seed, const std::string& name, std::int64_t full_index, Init init, float std) {
  ParamInit how;
  how.kind = init;
  how.std = std;
  how.key = param_key(seed, name);
  return init_element(how, full_index);
}

std::unique_ptr<Param> make_param(Ops& ops, std::string name, Shape full_shape, ShardSpec shard, Init init,
                                  float std, std::uint64_t seed, bool weight_decay) {
  auto p = std::make_unique<Param>();
  p->name = std::move(name);
  p->full_shape = std::move(full_shape);
  p->shard = shard;
  p->weight_decay = weight_decay;
  if (shard.dim >= 0 && p->full_shape[static_cast<std::size_t>(shard.dim)] % shard.parts != 0)
    throw std::logic_error("parameter " + p->name + " " + shape_string(p->full_shape) + " does not split in " +
                           std::to_string(shard.parts) + " along dim " + std::to_string(shard.dim));
  p->value = ops.empty(p->shard_shape());
  ops.init_param(p->value, param_init(*p, init, std, seed));
  return p;
}

Tensor pack_grads(Ops& ops, const ParamList& params, std::int64_t align) {
  std::int64_t total = 0;
  for (const Param* p : params) total += p->value.numel();
  Tensor buffer = ops.zeros({(total + align - 1) / align * align}, DType::f32);
  std::int64_t offset = 0;
  for (Param* p : params) {
    const std::int64_t n = p->value.numel();
    p->grad = buffer.rows(offset, n).view(p->value.shape());
    offset += n;
  }
  return buffer;
}

}  // namespace ptdp
