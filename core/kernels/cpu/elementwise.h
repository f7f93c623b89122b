// Element-wise ops of the transformer, fp32 reference: GeLU (tanh form),
// residual add, scaling and the sum of squares used by gradient clipping.
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// y = 0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³))), n elements.
template <class T> void gelu_forward(const T* x, std::int64_t n, T* y);
// dx = dy · gelu'(x) (overwritten).
template <class T> void gelu_backward(const T* dy, const T* x, std::int64_t n, T* dx);

// out = a + b (out may alias a or b).
template <class T> void add(const T* a, const T* b, std::int64_t n, T* out);
// x *= alpha.
template <class T> void scale(T* x, std::int64_t n, T alpha);
// Sum of x[i]², accumulated in double.
template <class T> double sum_squares(const T* x, std::int64_t n);

}  // namespace ptdp::cpu
