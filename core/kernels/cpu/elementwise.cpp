// Element-wise ops of the transformer, fp32 reference (see elementwise.h):
// residual add, scaling, sum of squares (GeLU: gelu.cpp).
#include "core/kernels/cpu/elementwise.h"

namespace ptdp::cpu {

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
  template void add<T>(const T*, const T*, std::int64_t, T*);           \
  template void scale<T>(T*, std::int64_t, T);                          \
  template double sum_squares<T>(const T*, std::int64_t);
PTDP_INSTANTIATE(float)
PTDP_INSTANTIATE(double)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cpu
