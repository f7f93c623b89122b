// Bias add and its gradient, fp32 reference. Letters: n rows, m features.
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// y[n, m] += bias[m].
template <class T> void bias_add(T* y, const T* bias, std::int64_t n, std::int64_t m);
// dbias[m] += Σ_i dy[i, m].
template <class T> void bias_backward(const T* dy, std::int64_t n, std::int64_t m, T* dbias);

}  // namespace ptdp::cpu
