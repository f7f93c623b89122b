// Element-wise ops of the transformer, fp32 reference (see elementwise.h):
// GeLU (tanh form) and its derivative, residual add, scaling, sum of squares.
#include "core/kernels/cpu/elementwise.h"

#include <cmath>

namespace ptdp::cpu {
namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kGeluCubic = 0.044715;

}  // namespace

// y (n) = 0.5·x·(1 + tanh(u)), u = sqrt(2/pi)·(x + 0.044715·x³).
template <class T>
void gelu_forward(const T* x, std::int64_t n, T* y) {
  const T c = static_cast<T>(kSqrt2OverPi), k = static_cast<T>(kGeluCubic);
  for (std::int64_t i = 0; i < n; ++i) {
    const T u = c * (x[i] + k * x[i] * x[i] * x[i]);
    y[i] = T(0.5) * x[i] * (T(1) + std::tanh(u));
  }
}

// dx (n) = dy · (0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·sqrt(2/pi)·(1 + 3·0.044715·x²)).
template <class T>
void gelu_backward(const T* dy, const T* x, std::int64_t n, T* dx) {
  const T c = static_cast<T>(kSqrt2OverPi), k = static_cast<T>(kGeluCubic);
  for (std::int64_t i = 0; i < n; ++i) {
    const T th = std::tanh(c * (x[i] + k * x[i] * x[i] * x[i]));
    const T du = c * (T(1) + T(3) * k * x[i] * x[i]);
    dx[i] = dy[i] * (T(0.5) * (T(1) + th) + T(0.5) * x[i] * (T(1) - th * th) * du);
  }
}

// out (n) = a + b; element by element, so aliasing either input is safe.
template <class T>
void add(const T* a, const T* b, std::int64_t n, T* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

// x (n) *= alpha.
template <class T>
void scale(T* x, std::int64_t n, T alpha) {
  for (std::int64_t i = 0; i < n; ++i) x[i] *= alpha;
}

// Σ x[i]² over n elements, accumulated in double.
template <class T>
double sum_squares(const T* x, std::int64_t n) {
  double acc = 0;
  for (std::int64_t i = 0; i < n; ++i) acc += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return acc;
}

#define PTDP_INSTANTIATE(T)                                             \
  template void gelu_forward<T>(const T*, std::int64_t, T*);            \
  template void gelu_backward<T>(const T*, const T*, std::int64_t, T*); \
  template void add<T>(const T*, const T*, std::int64_t, T*);           \
  template void scale<T>(T*, std::int64_t, T);                          \
  template double sum_squares<T>(const T*, std::int64_t);
PTDP_INSTANTIATE(float)
PTDP_INSTANTIATE(double)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cpu
