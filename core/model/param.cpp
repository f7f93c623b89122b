// Parameter shards and their counter-based initialisation.
#include "core/model/param.h"

#include <cmath>
#include <numbers>
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

// A uniform in (0, 1) from 53 random bits, never exactly 0.
double uniform(std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }

}  // namespace

Shape Param::shard_shape() const {
  Shape s = full_shape;
  if (shard.dim >= 0) s[static_cast<std::size_t>(shard.dim)] /= shard.parts;
  return s;
}

std::int64_t Param::full_index(std::int64_t local) const {
  if (shard.dim < 0) return local;
  const auto dim = static_cast<std::size_t>(shard.dim);
  std::int64_t inner = 1;
  for (std::size_t i = dim + 1; i < full_shape.size(); ++i) inner *= full_shape[i];
  const std::int64_t chunk = full_shape[dim] / shard.parts;
  const std::int64_t outer = local / (chunk * inner);
  const std::int64_t j = (local / inner) % chunk;
  const std::int64_t i = local % inner;
  return (outer * full_shape[dim] + shard.index * chunk + j) * inner + i;
}

float init_value(std::uint64_t seed, const std::string& name, std::int64_t full_index, Init init, float std) {
  if (init == Init::zeros) return 0.0f;
  if (init == Init::ones) return 1.0f;
  const std::uint64_t key = splitmix64(seed ^ hash_name(name)) + 2 * static_cast<std::uint64_t>(full_index);
  const double u1 = uniform(splitmix64(key)), u2 = uniform(splitmix64(key + 1));
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);  // Box-Muller
  return static_cast<float>(z * std);
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
  const Shape local = p->shard_shape();
  std::vector<float> host(static_cast<std::size_t>(shape_numel(local)));
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = init_value(seed, p->name, p->full_index(static_cast<std::int64_t>(i)), init, std);
  p->value = ops.empty(local);
  ops.upload_f32(host.data(), p->value);
  return p;
}

Tensor pack_grads(Ops& ops, const ParamList& params) {
  std::int64_t total = 0;
  for (const Param* p : params) total += p->value.numel();
  Tensor buffer = ops.zeros({total}, DType::f32);
  std::int64_t offset = 0;
  for (Param* p : params) {
    const std::int64_t n = p->value.numel();
    p->grad = buffer.rows(offset, n).view(p->value.shape());
    offset += n;
  }
  return buffer;
}

}  // namespace ptdp
