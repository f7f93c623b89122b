// GeLU (tanh form) of one element and its derivative, shared by the reference
// loops (gelu.cpp) and the vector clones (elementwise_vector.cpp).
// With u = sqrt(2/pi)·(x + 0.044715·x³), 0.5·(1 + tanh u) = 1/(1 + e^−2u) = σ,
// so GeLU needs one exponential and no subtraction that cancels; x large and
// negative: e^−2u is huge (fp32: clamped at e^88) and y underflows to ~0.
// fp32 takes vector_exp (vectorizable); double the library's exp.
#pragma once
#include <cmath>

#include "core/kernels/cpu/vector_exp.h"

namespace ptdp::cpu::gelu_formula {

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kCubic = 0.044715;

inline float exp_of(float v) { return vector_exp(v); }
inline double exp_of(double v) { return std::exp(v); }

template <class T>
T u_of(T x) {
  return static_cast<T>(kSqrt2OverPi) * (x + static_cast<T>(kCubic) * x * x * x);
}

// y = 0.5·x·(1 + tanh(u)) = x·σ.
template <class T>
T value(T x) {
  return x / (T(1) + exp_of(T(-2) * u_of(x)));
}

// dy · (0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·u'), u' = sqrt(2/pi)·(1 + 3·0.044715·x²);
// with σ = 1/(1 + e), e = e^−2u: 0.5·(1 − tanh² u) = 2·σ·(1 − σ) and 1 − σ = e·σ.
template <class T>
T grad(T dy, T x) {
  const T c = static_cast<T>(kSqrt2OverPi), k = static_cast<T>(kCubic);
  const T e = exp_of(T(-2) * u_of(x));
  const T s = T(1) / (T(1) + e);
  const T du = c * (T(1) + T(3) * k * x * x);
  return dy * (s + T(2) * x * s * (e * s) * du);
}

}  // namespace ptdp::cpu::gelu_formula
