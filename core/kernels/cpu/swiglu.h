// SwiGLU activation (Llama's MLP), fp32 reference. Letters: n rows, f inner width
// (this rank's share). Each row of pre (n, 2f) holds [gate | up].
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// y[n, f] = silu(gate) ∘ up, silu(x) = x·sigmoid(x).
template <class T>
void swiglu_forward(const T* pre, std::int64_t n, std::int64_t f, T* y);

// dpre[n, 2f] (overwritten) = [dy ∘ up ∘ silu'(gate) | dy ∘ silu(gate)].
template <class T>
void swiglu_backward(const T* dy, const T* pre, std::int64_t n, std::int64_t f, T* dpre);

}  // namespace ptdp::cpu
