// Rotary position embedding, rotate-half convention, fp32 reference. Letters:
// b micro-batch, s sequence, c heads in a row, d head dim (even).
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// In place on x viewed as (b, s, c, stride) of which each head's first d values
// are rotated: pairs (j, j + d/2), j < d/2, of the token at position p (its index
// in s) turn by sign·p·theta^(-2j/d). q (b, s, a, d): c = a, stride = d; the k
// half of kv (b, s, g, 2, d): c = g, stride = 2d. sign −1 is the transpose
// (the backward of sign +1).
template <class T>
void rope_rotate(T* x, std::int64_t b, std::int64_t s, std::int64_t c, std::int64_t stride, std::int64_t head_dim,
                 double theta, int sign);

}  // namespace ptdp::cpu
