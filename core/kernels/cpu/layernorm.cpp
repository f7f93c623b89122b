// Layer normalisation over the last dimension, fp32 reference (see layernorm.h).
// Letters: n rows (tokens), h hidden. Statistics are accumulated in T.
#include "core/kernels/cpu/layernorm.h"

#include <cmath>

namespace ptdp::cpu {

// x, y (n, h); gamma, beta (h); mean, rstd (n).
template <class T>
void layernorm_forward(const T* x, const T* gamma, const T* beta, std::int64_t n, std::int64_t h,
                       T eps, T* y, T* mean, T* rstd) {
  const T inv_h = T(1) / static_cast<T>(h);
  for (std::int64_t i = 0; i < n; ++i) {
    const T* xi = x + i * h;
    T mu = 0;
    for (std::int64_t j = 0; j < h; ++j) mu += xi[j];
    mu *= inv_h;
    T var = 0;
    for (std::int64_t j = 0; j < h; ++j) var += (xi[j] - mu) * (xi[j] - mu);
    var *= inv_h;
    const T r = T(1) / std::sqrt(var + eps);
    for (std::int64_t j = 0; j < h; ++j) y[i * h + j] = (xi[j] - mu) * r * gamma[j] + beta[j];
    mean[i] = mu;
    rstd[i] = r;
  }
}

// With xhat = (x - mean)·rstd and g = dy·gamma:
// dx = rstd · (g - mean_j(g) - xhat · mean_j(g · xhat)); dgamma += Σ_i dy·xhat; dbeta += Σ_i dy.
template <class T>
void layernorm_backward(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd,
                        std::int64_t n, std::int64_t h, T* dx, T* dgamma, T* dbeta) {
  const T inv_h = T(1) / static_cast<T>(h);
  for (std::int64_t i = 0; i < n; ++i) {
    const T* dyi = dy + i * h;
    const T* xi = x + i * h;
    T g_mean = 0, gx_mean = 0;
    for (std::int64_t j = 0; j < h; ++j) {
      const T xhat = (xi[j] - mean[i]) * rstd[i];
      const T g = dyi[j] * gamma[j];
      g_mean += g;
      gx_mean += g * xhat;
      dgamma[j] += dyi[j] * xhat;
      dbeta[j] += dyi[j];
    }
    g_mean *= inv_h;
    gx_mean *= inv_h;
    for (std::int64_t j = 0; j < h; ++j) {
      const T xhat = (xi[j] - mean[i]) * rstd[i];
      dx[i * h + j] = rstd[i] * (dyi[j] * gamma[j] - g_mean - xhat * gx_mean);
    }
  }
}

#define PTDP_INSTANTIATE(T)                                                                       \
  template void layernorm_forward<T>(const T*, const T*, const T*, std::int64_t, std::int64_t, T, \
                                     T*, T*, T*);                                                 \
  template void layernorm_backward<T>(const T*, const T*, const T*, const T*, const T*,           \
                                      std::int64_t, std::int64_t, T*, T*, T*);
PTDP_INSTANTIATE(float)
PTDP_INSTANTIATE(double)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cpu
