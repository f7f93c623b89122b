// One row-major GEMM through the BLAS the CPU backend links (cblas_sgemm for
// float, cblas_dgemm for double), for the linear layers and attention.
// Letters: rows × cols output, inner the contracted size.
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// C[rows, cols] = alpha · op(A) · op(B) + beta · C, row-major, leading
// dimensions (row strides) given: op(A) is (rows, inner), op(B) (inner, cols).
// inner == 0 gives C = beta · C (BLAS refuses a zero leading dimension).
template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t rows, std::int64_t cols, std::int64_t inner, T alpha,
          const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc);

}  // namespace ptdp::cpu
