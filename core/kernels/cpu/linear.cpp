// Linear layer y = x·Wᵀ + b through OpenBLAS GEMM (see linear.h).
// Letters: n rows (tokens), k input features, m output features; all row-major.
#include "core/kernels/cpu/linear.h"

#include "core/kernels/cpu/gemm.h"

namespace ptdp::cpu {

// y (n, m) = x (n, k) · w (m, k)ᵀ + bias (m).
template <class T>
void linear_forward(const T* x, const T* w, const T* bias, std::int64_t n, std::int64_t k,
                    std::int64_t m, T* y) {
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < m; ++j) y[i * m + j] = bias ? bias[j] : T(0);
  }
  gemm<T>(false, true, n, m, k, T(1), x, k, w, k, T(1), y, m);
}

// dx (n, k) = dy (n, m) · w (m, k); dw (m, k) += dyᵀ · x; dbias (m) += Σ_i dy[i, :].
template <class T>
void linear_backward(const T* dy, const T* x, const T* w, std::int64_t n, std::int64_t k,
                     std::int64_t m, T* dx, T* dw, T* dbias) {
  if (dx) gemm<T>(false, false, n, k, m, T(1), dy, m, w, k, T(0), dx, k);
  if (dw) gemm<T>(true, false, m, k, n, T(1), dy, m, x, k, T(1), dw, k);
  if (dbias) {
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < m; ++j) dbias[j] += dy[i * m + j];
    }
  }
}

#define PTDP_INSTANTIATE(T)                                                                  \
  template void linear_forward<T>(const T*, const T*, const T*, std::int64_t, std::int64_t,  \
                                  std::int64_t, T*);                                         \
  template void linear_backward<T>(const T*, const T*, const T*, std::int64_t, std::int64_t, \
                                   std::int64_t, T*, T*, T*);
PTDP_INSTANTIATE(float)
PTDP_INSTANTIATE(double)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cpu
