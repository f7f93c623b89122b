// LayerNorm and RMSNorm, fp32 fast paths of layernorm.h and rmsnorm.h (same
// arguments and results up to rounding): row sums in 16 lanes, one clone per
// vector width (vector_lanes.h). Letters: n rows, h hidden.
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// As layernorm_forward: x, y (n, h); gamma, beta (h); mean, rstd (n).
void layernorm_forward_vector(const float* x, const float* gamma, const float* beta, std::int64_t n,
                              std::int64_t h, float eps, float* y, float* mean, float* rstd);
// As layernorm_backward: dx (n, h) overwritten; dgamma, dbeta (h) accumulated.
void layernorm_backward_vector(const float* dy, const float* x, const float* gamma, const float* mean,
                               const float* rstd, std::int64_t n, std::int64_t h, float* dx, float* dgamma,
                               float* dbeta);
// As rmsnorm_forward: x, y (n, h); gamma (h); rstd (n).
void rmsnorm_forward_vector(const float* x, const float* gamma, std::int64_t n, std::int64_t h, float eps, float* y,
                            float* rstd);
// As rmsnorm_backward: dx (n, h) overwritten; dgamma (h) accumulated.
void rmsnorm_backward_vector(const float* dy, const float* x, const float* gamma, const float* rstd, std::int64_t n,
                             std::int64_t h, float* dx, float* dgamma);

}  // namespace ptdp::cpu
