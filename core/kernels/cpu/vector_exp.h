// exp(x) in fp32 written so that GCC vectorizes the loops that call it (no
// library call, no branch): the CPU GeLU spent most of its time in glibc's
// scalar tanhf/expm1f, one element at a time.
// Method: x = n·ln2 + r with n = round(x·log2 e) (the 1.5·2²³ rounding trick,
// exact in round-to-nearest) and |r| ≤ ln2/2 (Cody–Waite split of ln2), e^r by
// its Taylor series to r⁷ (truncation ≤ 0.347⁸/8! ≈ 5e-9 relative), times 2ⁿ
// built from the exponent bits. Relative error ≤ 4 ulp (≤ 5e-7) for
// x ∈ [−87, 88], checked against double in test_vector_exp; x is clamped to
// that range, so exp(x < −87) returns e^−87 ≈ 1.6e-38 and exp(x > 88) e^88.
// Fast only where compiled with the flags gelu.cpp has (core/CMakeLists.txt).
#pragma once
#include <bit>
#include <cstdint>

namespace ptdp::cpu {

inline float vector_exp(float x) {
  constexpr float kLog2e = 1.44269504f, kLn2Hi = 0.693145752f, kLn2Lo = 1.42860677e-6f;
  constexpr float kRound = 12582912.0f;  // 1.5·2²³: adding it rounds to an integer
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float n = (x * kLog2e + kRound) - kRound;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const auto bits = static_cast<std::uint32_t>(static_cast<std::int32_t>(n) + 127) << 23;
  return p * std::bit_cast<float>(bits);
}

}  // namespace ptdp::cpu
