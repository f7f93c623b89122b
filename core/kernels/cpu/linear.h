// Linear layer y = x·Wᵀ + b through BLAS (cblas_sgemm for float, cblas_dgemm for double).
// Letters: n rows (tokens), k input features, m output features.
// W is (m, k) row-major, as a column-parallel shard holds m = out/t rows.
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// y[n, m] = x[n, k] · w[m, k]ᵀ (+ bias[m] when bias != nullptr).
template <class T>
void linear_forward(const T* x, const T* w, const T* bias, std::int64_t n, std::int64_t k,
                    std::int64_t m, T* y);

// dx[n, k] = dy · w (overwritten; skipped when dx == nullptr);
// dw[m, k] += dyᵀ · x; dbias[m] += column sums of dy (skipped when nullptr).
template <class T>
void linear_backward(const T* dy, const T* x, const T* w, std::int64_t n, std::int64_t k,
                     std::int64_t m, T* dx, T* dw, T* dbias);

}  // namespace ptdp::cpu
