// GeLU (tanh form) and its derivative, fp32 reference (see elementwise.h; the
// formula of one element: gelu_formula.h).
// Its own file for its compile flags (core/CMakeLists.txt): the clamp in
// vector_exp.h must become min/max instructions. Without -ffinite-math-only
// GCC turned the clamp into three paths and evaluated all of them, dividing x
// by e^88 into denormals on every element (microcode assists: 5× slower).
// The clamp may turn a NaN exponent finite, but y = x·σ and dx carry x itself,
// so a NaN input still gives a NaN output (VectorExp.GeluPassesNanThrough).
#include "core/kernels/cpu/elementwise.h"
#include "core/kernels/cpu/gelu_formula.h"

namespace ptdp::cpu {

// y (n) = gelu(x).
template <class T>
void gelu_forward(const T* x, std::int64_t n, T* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = gelu_formula::value(x[i]);
}

// dx (n) = dy · gelu'(x).
template <class T>
void gelu_backward(const T* dy, const T* x, std::int64_t n, T* dx) {
  for (std::int64_t i = 0; i < n; ++i) dx[i] = gelu_formula::grad(dy[i], x[i]);
}

#define PTDP_INSTANTIATE(T)                                  \
  template void gelu_forward<T>(const T*, std::int64_t, T*); \
  template void gelu_backward<T>(const T*, const T*, std::int64_t, T*);
PTDP_INSTANTIATE(float)
PTDP_INSTANTIATE(double)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cpu
