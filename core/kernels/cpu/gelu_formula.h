// GeLU (tanh form) of one element and its derivative, shared by the reference
// loops (gelu.cpp) and the vector clones (elementwise_vector.cpp).
// With u = sqrt(2/pi)·(x + 0.044715·x³), 0.5·(1 + tanh u) = 1/(1 + e^−2u) = σ,
// so GeLU needs one exponential and no subtraction that cancels; x large and
// negative: e^−2u is huge (fp32: clamped at e^88) and y underflows to ~0.
// fp32 takes vector_exp (vectorizable); double the library's exp.
// The exponent −2u is capped at 80: past it σ = 1/(1 + e^−2u) would be a
// denormal (e^88 gives 6e-39 < 1.2e-38), and operations on denormals take
// microcode assists: without the cap the backward took 1.8× as long on
// pre-activations of σ = 16 (half the elements below −5; 262144 elements, AMD
// EPYC, AVX-512 clone). At the cap σ = e^−80 ≈ 1.8e-35, so y = x·σ is off by at
// most |x|·1.8e-35 from the exact form.
#pragma once
#include <algorithm>
#include <cmath>

#include "core/kernels/cpu/vector_exp.h"

namespace ptdp::cpu::gelu_formula {

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kCubic = 0.044715;
constexpr double kMaxExponent = 80;

inline float exp_of(float v) { return vector_exp(v); }
inline double exp_of(double v) { return std::exp(v); }

template <class T>
T u_of(T x) {
  return static_cast<T>(kSqrt2OverPi) * (x + static_cast<T>(kCubic) * x * x * x);
}

// e^−2u, the exponent capped (above); std::min keeps a NaN exponent NaN.
template <class T>
T exp_minus_2u(T x) {
  return exp_of(std::min(T(-2) * u_of(x), static_cast<T>(kMaxExponent)));
}

// y = 0.5·x·(1 + tanh(u)) = x·σ.
template <class T>
T value(T x) {
  return x / (T(1) + exp_minus_2u(x));
}

// dy · (0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·u'), u' = sqrt(2/pi)·(1 + 3·0.044715·x²);
// with σ = 1/(1 + e), e = e^−2u: 0.5·(1 − tanh² u) = 2·σ·(1 − σ) and 1 − σ = e·σ.
template <class T>
T grad(T dy, T x) {
  const T c = static_cast<T>(kSqrt2OverPi), k = static_cast<T>(kCubic);
  const T e = exp_minus_2u(x);
  const T s = T(1) / (T(1) + e);
  const T du = c * (T(1) + T(3) * k * x * x);
  return dy * (s + T(2) * x * s * (e * s) * du);
}

}  // namespace ptdp::cpu::gelu_formula
