// Causal multi-head self-attention core (after the QKV projection), fp32 reference.
// Letters: b micro-batch, s sequence, a heads on this rank, d head dim (h/a_total).
// qkv layout (b, s, a, 3, d): per head q, k, v contiguous, so a column-parallel
// split of the QKV weight rows gives each tensor-parallel rank whole heads.
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// out[b, s, a, d] = softmax(q kᵀ / sqrt(d) with causal mask) · v per (b, a).
// probs[b, a, s, s] saved for backward (upper triangle written as 0).
template <class T>
void attention_forward(const T* qkv, std::int64_t b, std::int64_t s, std::int64_t a,
                       std::int64_t d, T* out, T* probs);

// dqkv[b, s, a, 3, d] (overwritten) from dout[b, s, a, d], qkv and the saved probs.
template <class T>
void attention_backward(const T* dout, const T* qkv, const T* probs, std::int64_t b,
                        std::int64_t s, std::int64_t a, std::int64_t d, T* dqkv);

}  // namespace ptdp::cpu
