// LayerNorm and RMSNorm, fp32 fast paths (see norm_vector.h; the formulas are
// layernorm.cpp's and rmsnorm.cpp's). Each row's sums go through lane_sum; the
// element loops carry no reduction, so they vectorize as written.
#include "core/kernels/cpu/norm_vector.h"

#include <cmath>

#include "core/kernels/cpu/vector_lanes.h"

namespace ptdp::cpu {

PTDP_VECTOR_CLONES void layernorm_forward_vector(const float* x, const float* gamma, const float* beta,
                                                 std::int64_t n, std::int64_t h, float eps, float* y, float* mean,
                                                 float* rstd) {
  const float inv_h = 1.0f / static_cast<float>(h);
  for (std::int64_t i = 0; i < n; ++i) {
    const float* xi = x + i * h;
    float* yi = y + i * h;
    const float mu = lane_sum(h, [xi](std::int64_t j) { return xi[j]; }) * inv_h;
    const float var = lane_sum(h, [xi, mu](std::int64_t j) { return (xi[j] - mu) * (xi[j] - mu); }) * inv_h;
    const float r = 1.0f / std::sqrt(var + eps);
    PTDP_ELEMENTWISE
    for (std::int64_t j = 0; j < h; ++j) yi[j] = (xi[j] - mu) * r * gamma[j] + beta[j];
    mean[i] = mu;
    rstd[i] = r;
  }
}

// xhat = (x − mean)·rstd, g = dy·gamma: dx = rstd·(g − mean_j g − xhat·mean_j(g·xhat)).
PTDP_VECTOR_CLONES void layernorm_backward_vector(const float* dy, const float* x, const float* gamma,
                                                  const float* mean, const float* rstd, std::int64_t n,
                                                  std::int64_t h, float* dx, float* dgamma, float* dbeta) {
  const float inv_h = 1.0f / static_cast<float>(h);
  for (std::int64_t i = 0; i < n; ++i) {
    const float* dyi = dy + i * h;
    const float* xi = x + i * h;
    float* dxi = dx + i * h;
    const float mu = mean[i], r = rstd[i];
    const float g_mean = lane_sum(h, [=](std::int64_t j) { return dyi[j] * gamma[j]; }) * inv_h;
    const float gx_mean = lane_sum(h, [=](std::int64_t j) { return dyi[j] * gamma[j] * ((xi[j] - mu) * r); }) * inv_h;
    PTDP_ELEMENTWISE
    for (std::int64_t j = 0; j < h; ++j) {
      const float xhat = (xi[j] - mu) * r;
      dgamma[j] += dyi[j] * xhat;
      dbeta[j] += dyi[j];
      dxi[j] = r * (dyi[j] * gamma[j] - g_mean - xhat * gx_mean);
    }
  }
}

PTDP_VECTOR_CLONES void rmsnorm_forward_vector(const float* x, const float* gamma, std::int64_t n, std::int64_t h,
                                               float eps, float* y, float* rstd) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float* xi = x + i * h;
    float* yi = y + i * h;
    const float ms = lane_sum(h, [xi](std::int64_t j) { return xi[j] * xi[j]; });
    const float r = 1.0f / std::sqrt(ms / static_cast<float>(h) + eps);
    PTDP_ELEMENTWISE
    for (std::int64_t j = 0; j < h; ++j) yi[j] = xi[j] * r * gamma[j];
    rstd[i] = r;
  }
}

// xhat = x·rstd, g = dy·gamma: dx = rstd·(g − xhat·mean_j(g·xhat)).
PTDP_VECTOR_CLONES void rmsnorm_backward_vector(const float* dy, const float* x, const float* gamma,
                                                const float* rstd, std::int64_t n, std::int64_t h, float* dx,
                                                float* dgamma) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float* dyi = dy + i * h;
    const float* xi = x + i * h;
    float* dxi = dx + i * h;
    const float r = rstd[i];
    const float gx_mean =
        lane_sum(h, [=](std::int64_t j) { return dyi[j] * gamma[j] * (xi[j] * r); }) / static_cast<float>(h);
    PTDP_ELEMENTWISE
    for (std::int64_t j = 0; j < h; ++j) {
      dgamma[j] += dyi[j] * (xi[j] * r);
      dxi[j] = r * (dyi[j] * gamma[j] - xi[j] * r * gx_mean);
    }
  }
}

}  // namespace ptdp::cpu
