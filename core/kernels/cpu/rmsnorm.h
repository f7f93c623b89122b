// RMS normalisation over the last dimension (Llama's), fp32 reference.
// Letters: n rows (tokens), h hidden.
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// y[n, h] = x · rstd · gamma, rstd (n) = 1/sqrt(mean_j x² + eps), saved for backward.
template <class T>
void rmsnorm_forward(const T* x, const T* gamma, std::int64_t n, std::int64_t h, T eps, T* y, T* rstd);

// dx[n, h] overwritten; dgamma[h] accumulated (+=).
template <class T>
void rmsnorm_backward(const T* dy, const T* x, const T* gamma, const T* rstd, std::int64_t n, std::int64_t h,
                      T* dx, T* dgamma);

}  // namespace ptdp::cpu
