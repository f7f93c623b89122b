// Rotary position embedding, fp32 reference (see rope.h). The angles are
// computed in double, once per (position, pair).
#include "core/kernels/cpu/rope.h"

#include <cmath>
#include <vector>

namespace ptdp::cpu {

template <class T>
void rope_rotate(T* x, std::int64_t b, std::int64_t s, std::int64_t c, std::int64_t stride, std::int64_t head_dim,
                 double theta, int sign) {
  const std::int64_t half = head_dim / 2;
  std::vector<T> cosv(static_cast<std::size_t>(half)), sinv(static_cast<std::size_t>(half));
  for (std::int64_t p = 0; p < s; ++p) {
    for (std::int64_t j = 0; j < half; ++j) {
      const double exponent = -2.0 * static_cast<double>(j) / static_cast<double>(head_dim);
      const double angle = static_cast<double>(p) * std::pow(theta, exponent);
      cosv[static_cast<std::size_t>(j)] = static_cast<T>(std::cos(angle));
      sinv[static_cast<std::size_t>(j)] = static_cast<T>(sign * std::sin(angle));
    }
    for (std::int64_t ib = 0; ib < b; ++ib)
      for (std::int64_t ih = 0; ih < c; ++ih) {
        T* head = x + ((ib * s + p) * c + ih) * stride;
        for (std::int64_t j = 0; j < half; ++j) {
          const T x1 = head[j], x2 = head[j + half];
          const T cs = cosv[static_cast<std::size_t>(j)], sn = sinv[static_cast<std::size_t>(j)];
          head[j] = x1 * cs - x2 * sn;
          head[j + half] = x2 * cs + x1 * sn;
        }
      }
  }
}

template void rope_rotate<float>(float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                 double, int);
template void rope_rotate<double>(double*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                  double, int);

}  // namespace ptdp::cpu
