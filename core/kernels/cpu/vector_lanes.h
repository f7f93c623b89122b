// Reductions over fp32 rows in 16 fixed lanes, and the attribute that builds a
// kernel once per x86-64 vector width (AVX-512, AVX2, baseline SSE2) with the
// best one picked when the program loads (GCC/clang function multiversioning).
// Lane j sums elements j, j+16, j+32, ...; the lanes are then added in order.
// The order of additions is therefore the same whatever the vector width, and
// with -ffp-contract=off (the fast kernel files' flags, core/CMakeLists.txt) no
// clone fuses a multiply-add: every clone gives bit-identical results, on any
// machine. A plain left-to-right sum is latency-bound (one add in flight);
// sixteen lanes let the compiler keep one to four vector registers busy.
#pragma once
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__)
#define PTDP_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PTDP_VECTOR_CLONES
#endif

// Before an element loop whose element j of every output reads only element j
// of the inputs (an output may be an input, exactly: no loop-carried dependency).
// Without it GCC versions the loop on a run-time overlap test of every pair of
// arrays, and took the scalar copy for LayerNorm's backward (dx, dgamma, dbeta).
#if defined(__clang__)
#define PTDP_ELEMENTWISE _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define PTDP_ELEMENTWISE _Pragma("GCC ivdep")
#else
#define PTDP_ELEMENTWISE
#endif

namespace ptdp::cpu {

inline constexpr int kLanes = 16;

// Σ f(i) for i in [0, n), in the lane order above, accumulated in f's type
// (float, or double for the gradient norm); f is inlined into each clone.
template <class F>
[[gnu::always_inline]] inline auto lane_sum(std::int64_t n, F f) {
  using Acc = decltype(f(std::int64_t{0}));
  Acc acc[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] += f(i + j);
  for (int j = 0; i + j < n; ++j) acc[j] += f(i + j);
  Acc total = 0;
  for (int j = 0; j < kLanes; ++j) total += acc[j];
  return total;
}

// max of x[0, n), n ≥ 1 (a max does not depend on order).
[[gnu::always_inline]] inline float lane_max(const float* x, std::int64_t n) {
  float acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = x[0];
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] = acc[j] > x[i + j] ? acc[j] : x[i + j];
  for (int j = 0; i + j < n; ++j) acc[j] = acc[j] > x[i + j] ? acc[j] : x[i + j];
  float m = acc[0];
  for (int j = 1; j < kLanes; ++j) m = m > acc[j] ? m : acc[j];
  return m;
}

}  // namespace ptdp::cpu
