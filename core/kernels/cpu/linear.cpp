// Linear layer y = x·Wᵀ + b through OpenBLAS GEMM (see linear.h).
// Letters: n rows (tokens), k input features, m output features; all row-major.
#include "core/kernels/cpu/linear.h"

#include <cblas.h>

#include <type_traits>

namespace ptdp::cpu {
namespace {

// C[M, N] = alpha · op(A) · op(B) + beta · C, row-major, leading dimensions given.
template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t rows, std::int64_t cols, std::int64_t inner,
          T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
          std::int64_t ldc) {
  if (rows == 0 || cols == 0) return;
  if (inner == 0) {  // BLAS refuses a zero leading dimension: C = beta · C by hand.
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) c[i * ldc + j] *= beta;
    }
    return;
  }
  const CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;
  const auto M = static_cast<blasint>(rows), N = static_cast<blasint>(cols);
  const auto K = static_cast<blasint>(inner);
  const auto la = static_cast<blasint>(lda), lb = static_cast<blasint>(ldb);
  const auto lc = static_cast<blasint>(ldc);
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha, a, la, b, lb, beta, c, lc);
  } else {
    static_assert(std::is_same_v<T, double>, "linear: float or double only");
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha, a, la, b, lb, beta, c, lc);
  }
}

}  // namespace

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
