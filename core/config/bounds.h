// Upper bounds on what a config and a machine profile may ask for (validate()
// refuses anything beyond them). Far beyond any model, cluster or device of
// the paper (GPT 1T: h 25600, l 128, s 2048 on 3072 GPUs; an A100 peaks at
// 312 TFLOP/s), and low enough that the products the code forms in 64-bit
// integers (t·p·d, b·s·h, b·a·s², h·f, V·h) and the rates it divides by stay
// finite.
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>

namespace ptdp {

inline constexpr std::int64_t kMaxSize = std::int64_t{1} << 20;         // any one size or count: l, h, a, s, V, f, b, B, v, t, p, d
inline constexpr std::int64_t kMaxRanks = std::int64_t{1} << 20;        // t·p·d
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;     // one tensor: b·s·h, b·s·f, b·a·s², h·f, V·h
inline constexpr std::int64_t kMaxMemoryBytes = std::int64_t{1} << 50;  // device memory: 1 PiB
inline constexpr double kMaxRate = 1e6;       // TFLOP/s and GB/s: a thousand times an H100
inline constexpr double kMaxLatencyUs = 1e6;  // latencies and launch costs: one second
inline constexpr double kMaxClipGrad = 1e6;    // a gradient-norm clip above this never acts

// The product of `factors` (each positive), or INT64_MAX where it would overflow.
inline std::int64_t saturating_product(std::initializer_list<std::int64_t> factors) {
  std::int64_t out = 1;
  for (const std::int64_t f : factors)
    if (__builtin_mul_overflow(out, f, &out)) return INT64_MAX;
  return out;
}

// `x` limited to the range of int, for sizes derived from sizes validate() may yet refuse.
inline int clamp_int(std::int64_t x) {
  return static_cast<int>(std::clamp<std::int64_t>(x, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

}  // namespace ptdp
