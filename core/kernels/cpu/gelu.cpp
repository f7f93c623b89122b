// GeLU (tanh form) and its derivative, fp32 reference (see elementwise.h).
// Its own file for its compile flags (core/CMakeLists.txt): the clamp in
// vector_exp.h must become min/max instructions. Without -ffinite-math-only
// GCC turned the clamp into three paths and evaluated all of them, dividing x
// by e^88 into denormals on every element (microcode assists: 5× slower).
// The clamp may turn a NaN exponent finite, but y = x·σ and dx carry x itself,
// so a NaN input still gives a NaN output (VectorExp.GeluPassesNanThrough).
#include <cmath>

#include "core/kernels/cpu/elementwise.h"
#include "core/kernels/cpu/vector_exp.h"

namespace ptdp::cpu {
namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kGeluCubic = 0.044715;

// e^v: the vectorizable fp32 form (vector_exp.h) or the library's in double.
inline float exp_of(float v) { return vector_exp(v); }
inline double exp_of(double v) { return std::exp(v); }

// With u = sqrt(2/pi)·(x + 0.044715·x³), 0.5·(1 + tanh u) = 1/(1 + e^−2u) = σ,
// so GeLU needs one exponential and no subtraction that cancels; x large and
// negative: e^−2u is huge (fp32: clamped at e^88) and y underflows to ~0.
template <class T>
T gelu_u(T x) {
  return static_cast<T>(kSqrt2OverPi) * (x + static_cast<T>(kGeluCubic) * x * x * x);
}

}  // namespace

// y (n) = 0.5·x·(1 + tanh(u)) = x·σ.
template <class T>
void gelu_forward(const T* x, std::int64_t n, T* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] / (T(1) + exp_of(T(-2) * gelu_u(x[i])));
}

// dx (n) = dy · (0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·u'), u' = sqrt(2/pi)·(1 + 3·0.044715·x²);
// with σ = 1/(1 + e), e = e^−2u: 0.5·(1 − tanh² u) = 2·σ·(1 − σ) and 1 − σ = e·σ.
template <class T>
void gelu_backward(const T* dy, const T* x, std::int64_t n, T* dx) {
  const T c = static_cast<T>(kSqrt2OverPi), k = static_cast<T>(kGeluCubic);
  for (std::int64_t i = 0; i < n; ++i) {
    const T e = exp_of(T(-2) * gelu_u(x[i]));
    const T s = T(1) / (T(1) + e);
    const T du = c * (T(1) + T(3) * k * x[i] * x[i]);
    dx[i] = dy[i] * (s + T(2) * x[i] * s * (e * s) * du);
  }
}

#define PTDP_INSTANTIATE(T)                                  \
  template void gelu_forward<T>(const T*, std::int64_t, T*); \
  template void gelu_backward<T>(const T*, const T*, std::int64_t, T*);
PTDP_INSTANTIATE(float)
PTDP_INSTANTIATE(double)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cpu
