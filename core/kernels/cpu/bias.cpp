// Bias add and bias gradient (row-parallel layers add their bias after the all-reduce).
#include "core/kernels/cpu/bias.h"

namespace ptdp::cpu {

template <class T> void bias_add(T* y, const T* bias, std::int64_t n, std::int64_t m) {
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) y[i * m + j] += bias[j];
}

template <class T> void bias_backward(const T* dy, std::int64_t n, std::int64_t m, T* dbias) {
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) dbias[j] += dy[i * m + j];
}

template void bias_add<float>(float*, const float*, std::int64_t, std::int64_t);
template void bias_add<double>(double*, const double*, std::int64_t, std::int64_t);
template void bias_backward<float>(const float*, std::int64_t, std::int64_t, float*);
template void bias_backward<double>(const double*, std::int64_t, std::int64_t, double*);

}  // namespace ptdp::cpu
