// AdamW update, fp32 reference (see adamw.h): decoupled weight decay,
// bias-corrected first and second moments. param, grad, m, v: (n).
#include "core/kernels/cpu/adamw.h"

#include <cmath>

namespace ptdp::cpu {

// m = β1 m + (1−β1) g;  v = β2 v + (1−β2) g²;
// p −= lr · (m̂ / (sqrt(v̂) + eps) + wd · p), m̂ = m/(1−β1^step), v̂ = v/(1−β2^step).
template <class T>
void adamw_step(T* param, const T* grad, T* m, T* v, std::int64_t n, const AdamWParams& hp) {
  const T b1 = static_cast<T>(hp.beta1), b2 = static_cast<T>(hp.beta2);
  const T lr = static_cast<T>(hp.lr), eps = static_cast<T>(hp.eps);
  const T wd = static_cast<T>(hp.weight_decay);
  // Bias corrections in double: β^step for large steps loses nothing there.
  const T bc1 = static_cast<T>(1.0 - std::pow(static_cast<double>(hp.beta1), hp.step));
  const T bc2 = static_cast<T>(1.0 - std::pow(static_cast<double>(hp.beta2), hp.step));
  for (std::int64_t i = 0; i < n; ++i) {
    m[i] = b1 * m[i] + (T(1) - b1) * grad[i];
    v[i] = b2 * v[i] + (T(1) - b2) * grad[i] * grad[i];
    const T m_hat = m[i] / bc1;
    const T v_hat = v[i] / bc2;
    param[i] -= lr * (m_hat / (std::sqrt(v_hat) + eps) + wd * param[i]);
  }
}

template void adamw_step<float>(float*, const float*, float*, float*, std::int64_t,
                                const AdamWParams&);
template void adamw_step<double>(double*, const double*, double*, double*, std::int64_t,
                                 const AdamWParams&);

}  // namespace ptdp::cpu
