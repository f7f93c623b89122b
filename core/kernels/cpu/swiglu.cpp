// SwiGLU, fp32 reference (see swiglu.h). pre, dpre (n, 2f); y, dy (n, f).
#include "core/kernels/cpu/swiglu.h"

#include <cmath>

namespace ptdp::cpu {
namespace {

template <class T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

}  // namespace

template <class T>
void swiglu_forward(const T* pre, std::int64_t n, std::int64_t f, T* y) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T* gate = pre + i * 2 * f;
    const T* up = gate + f;
    for (std::int64_t j = 0; j < f; ++j) y[i * f + j] = gate[j] * sigmoid(gate[j]) * up[j];
  }
}

// silu'(x) = σ(x)·(1 + x·(1 − σ(x))).
template <class T>
void swiglu_backward(const T* dy, const T* pre, std::int64_t n, std::int64_t f, T* dpre) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T* gate = pre + i * 2 * f;
    const T* up = gate + f;
    T* dgate = dpre + i * 2 * f;
    T* dup = dgate + f;
    for (std::int64_t j = 0; j < f; ++j) {
      const T sg = sigmoid(gate[j]), g = dy[i * f + j];
      dgate[j] = g * up[j] * sg * (T(1) + gate[j] * (T(1) - sg));
      dup[j] = g * gate[j] * sg;
    }
  }
}

#define PTDP_INSTANTIATE(T)                                                     \
  template void swiglu_forward<T>(const T*, std::int64_t, std::int64_t, T*); \
  template void swiglu_backward<T>(const T*, const T*, std::int64_t, std::int64_t, T*);
PTDP_INSTANTIATE(float)
PTDP_INSTANTIATE(double)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cpu
