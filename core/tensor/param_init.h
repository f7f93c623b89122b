// How a parameter shard is initialised, as data a backend can fill on its own
// device: the kind, the std and a per-parameter Philox key, plus the shard
// geometry that maps a local element to its index in the full (unsharded)
// tensor. Every element's value is a pure function of (key, full index), so any
// tensor-parallel layout, on the CPU or a GPU, starts from the same weights.
#pragma once
#include <math.h>  // ::sqrt, ::log, ::cos: host and device overloads

#include <cstdint>

#include "core/tensor/philox.h"

namespace ptdp {

enum class Init { zeros, ones, normal };

struct ParamInit {
  Init kind = Init::zeros;
  float std = 0;        // normal: standard deviation
  philox::Key key{};    // normal: from (seed, hash of the parameter's name)
  // Shard geometry (row-major full tensor split along one dimension D):
  // inner = product of the full sizes after D, full_dim = full size of D,
  // chunk = full_dim / parts, first = this rank's part index · chunk.
  bool split = false;   // false: the shard is the whole tensor (local index = full index)
  std::int64_t inner = 1, full_dim = 1, chunk = 1, first = 0;
};

// Offset in the full tensor of element `local` of the shard.
PTDP_HOST_DEVICE inline std::int64_t init_full_index(const ParamInit& how, std::int64_t local) {
  if (!how.split) return local;
  const std::int64_t outer = local / (how.chunk * how.inner);
  const std::int64_t j = (local / how.inner) % how.chunk;
  const std::int64_t i = local % how.inner;
  return (outer * how.full_dim + how.first + j) * how.inner + i;
}

// N(0, std²) for element `full_index` of the parameter keyed `key`: one Philox
// call with counter (index low, index high, 0, 0); two 53-bit uniforms in (0, 1)
// from its four words; Box-Muller (cosine branch) in double, rounded once to float.
PTDP_HOST_DEVICE inline float init_normal(philox::Key key, std::uint64_t full_index, float std) {
  const philox::Counter c{{static_cast<std::uint32_t>(full_index), static_cast<std::uint32_t>(full_index >> 32), 0u, 0u}};
  const philox::Counter r = philox::philox4x32_10(c, key);
  const std::uint64_t a = (static_cast<std::uint64_t>(r.w[1]) << 32) | r.w[0];
  const std::uint64_t b = (static_cast<std::uint64_t>(r.w[3]) << 32) | r.w[2];
  const double u1 = (static_cast<double>(a >> 11) + 0.5) * 0x1.0p-53;  // never 0: log is finite
  const double u2 = (static_cast<double>(b >> 11) + 0.5) * 0x1.0p-53;
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return static_cast<float>(::sqrt(-2.0 * ::log(u1)) * ::cos(kTwoPi * u2) * static_cast<double>(std));
}

// The initial value of element `local` of the shard.
PTDP_HOST_DEVICE inline float init_element(const ParamInit& how, std::int64_t local) {
  if (how.kind == Init::zeros) return 0.0f;
  if (how.kind == Init::ones) return 1.0f;
  return init_normal(how.key, static_cast<std::uint64_t>(init_full_index(how, local)), how.std);
}

}  // namespace ptdp
