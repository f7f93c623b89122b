// Where one (batch, query head) of causal attention lies in the CPU layouts:
// q, dq (b, s, a, d); kv, dkv (b, s, g, 2, d); out, dout (b, s, a, d);
// probs (b, a, s, s). Query head ih reads kv head ih/(a/g). One head is a
// strided view: the kernels see only offsets and row strides.
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// Offsets of position 0 and strides between consecutive positions in q (and
// dq), k, v (and dk, dv), out and probs.
struct AttentionHead {
  std::int64_t q0, q_row;       // query
  std::int64_t k0, v0, kv_row;  // its key and value
  std::int64_t out0, out_row;
  std::int64_t probs0;
};

inline AttentionHead attention_head(std::int64_t ib, std::int64_t ih, std::int64_t s, std::int64_t a,
                                    std::int64_t g, std::int64_t head_dim) {
  const std::int64_t j = ih / (a / g);  // the kv head this query head reads
  const std::int64_t k0 = (ib * s * g + j) * 2 * head_dim;
  const std::int64_t q0 = (ib * s * a + ih) * head_dim, q_row = a * head_dim;  // out has q's layout
  return {q0, q_row, k0, k0 + head_dim, g * 2 * head_dim, q0, q_row, (ib * a + ih) * s * s};
}

}  // namespace ptdp::cpu
