// AdamW, fp32 fast path (see adamw_vector.h; the formula is adamw.cpp's). The
// bias corrections become multiplications by their reciprocals and sqrt an
// instruction (-fno-math-errno, core/CMakeLists.txt), so the loop vectorizes.
#include "core/kernels/cpu/adamw_vector.h"

#include <cmath>

#include "core/kernels/cpu/vector_lanes.h"

namespace ptdp::cpu {

PTDP_VECTOR_CLONES void adamw_step_vector(float* param, const float* grad, float* m, float* v, std::int64_t n,
                                          const AdamWParams& hp) {
  const float b1 = hp.beta1, b2 = hp.beta2, lr = hp.lr, eps = hp.eps, wd = hp.weight_decay;
  // Bias corrections in double, as the reference: β^step for large steps loses nothing there.
  const auto inv_bc1 = static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(hp.beta1), hp.step)));
  const auto inv_bc2 = static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(hp.beta2), hp.step)));
  PTDP_ELEMENTWISE
  for (std::int64_t i = 0; i < n; ++i) {
    const float g = grad[i];
    const float mi = b1 * m[i] + (1.0f - b1) * g;
    const float vi = b2 * v[i] + (1.0f - b2) * g * g;
    m[i] = mi;
    v[i] = vi;
    param[i] -= lr * ((mi * inv_bc1) / (std::sqrt(vi * inv_bc2) + eps) + wd * param[i]);
  }
}

}  // namespace ptdp::cpu
