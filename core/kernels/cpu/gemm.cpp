// Row-major GEMM through cblas (see gemm.h).
#include "core/kernels/cpu/gemm.h"

#include <cblas.h>

#include <type_traits>

namespace ptdp::cpu {

template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t rows, std::int64_t cols, std::int64_t inner, T alpha,
          const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  if (rows == 0 || cols == 0) return;
  if (inner == 0) {
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
    static_assert(std::is_same_v<T, double>, "gemm: float or double only");
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha, a, la, b, lb, beta, c, lc);
  }
}

template void gemm<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                          const float*, std::int64_t, float, float*, std::int64_t);
template void gemm<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t, double, const double*,
                           std::int64_t, const double*, std::int64_t, double, double*, std::int64_t);

}  // namespace ptdp::cpu
