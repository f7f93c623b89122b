// RMS normalisation, fp32 reference (see rmsnorm.h). x, y, dy, dx (n, h); gamma,
// dgamma (h); rstd (n). Sums are accumulated in T.
#include "core/kernels/cpu/rmsnorm.h"

#include <cmath>

namespace ptdp::cpu {

template <class T>
void rmsnorm_forward(const T* x, const T* gamma, std::int64_t n, std::int64_t h, T eps, T* y, T* rstd) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T* xi = x + i * h;
    T ms = 0;
    for (std::int64_t j = 0; j < h; ++j) ms += xi[j] * xi[j];
    const T r = T(1) / std::sqrt(ms / static_cast<T>(h) + eps);
    for (std::int64_t j = 0; j < h; ++j) y[i * h + j] = xi[j] * r * gamma[j];
    rstd[i] = r;
  }
}

// With xhat = x·rstd and g = dy·gamma: dx = rstd · (g − xhat · mean_j(g · xhat))
// (d rstd/dx_j = −rstd³·x_j/h); dgamma += Σ_i dy·xhat.
template <class T>
void rmsnorm_backward(const T* dy, const T* x, const T* gamma, const T* rstd, std::int64_t n, std::int64_t h,
                      T* dx, T* dgamma) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T* dyi = dy + i * h;
    const T* xi = x + i * h;
    T gx_mean = 0;
    for (std::int64_t j = 0; j < h; ++j) {
      const T xhat = xi[j] * rstd[i];
      gx_mean += dyi[j] * gamma[j] * xhat;
      dgamma[j] += dyi[j] * xhat;
    }
    gx_mean /= static_cast<T>(h);
    for (std::int64_t j = 0; j < h; ++j) dx[i * h + j] = rstd[i] * (dyi[j] * gamma[j] - xi[j] * rstd[i] * gx_mean);
  }
}

#define PTDP_INSTANTIATE(T)                                                                             \
  template void rmsnorm_forward<T>(const T*, const T*, std::int64_t, std::int64_t, T, T*, T*);         \
  template void rmsnorm_backward<T>(const T*, const T*, const T*, const T*, std::int64_t, std::int64_t, \
                                    T*, T*);
PTDP_INSTANTIATE(float)
PTDP_INSTANTIATE(double)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cpu
