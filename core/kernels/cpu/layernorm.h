// Layer normalisation over the last dimension, fp32 reference.
// Letters: n rows (tokens), h hidden.
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// y[n, h] = (x - mean) * rstd * gamma + beta, rstd = 1/sqrt(var + eps), var biased.
// mean, rstd: (n) saved for the backward pass.
template <class T>
void layernorm_forward(const T* x, const T* gamma, const T* beta, std::int64_t n, std::int64_t h,
                       T eps, T* y, T* mean, T* rstd);

// dx[n, h] = input gradient (overwritten); dgamma[h], dbeta[h] accumulated (+=).
template <class T>
void layernorm_backward(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd,
                        std::int64_t n, std::int64_t h, T* dx, T* dgamma, T* dbeta);

}  // namespace ptdp::cpu
