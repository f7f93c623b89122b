// Causal self-attention core (after the Q and KV projections), fp32 reference,
// with grouped-query attention. Letters: b micro-batch, s sequence, a query heads
// on this rank, g key/value heads on this rank (g divides a), d head dim.
// q (b, s, a, d); kv (b, s, g, 2, d): k then v of each kv head; query head i
// reads kv head i/(a/g) (g = a: multi-head attention).
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// out[b, s, a, d] = softmax(q kᵀ / sqrt(d) with causal mask) · v per (b, query head).
// probs[b, a, s, s] saved for backward (upper triangle written as 0).
template <class T>
void attention_forward(const T* q, const T* kv, std::int64_t b, std::int64_t s, std::int64_t a,
                       std::int64_t g, std::int64_t head_dim, T* out, T* probs);

// dq[b, s, a, d] and dkv[b, s, g, 2, d] (overwritten) from dout[b, s, a, d], q, kv
// and the saved probs; dkv sums over the a/g query heads of each kv head.
template <class T>
void attention_backward(const T* dout, const T* q, const T* kv, const T* probs, std::int64_t b,
                        std::int64_t s, std::int64_t a, std::int64_t g, std::int64_t head_dim, T* dq, T* dkv);

}  // namespace ptdp::cpu
