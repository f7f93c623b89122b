// Causal self-attention core on BLAS: the fp32 fast path of attention.h's
// reference, with the same layouts and results up to rounding (tested against
// it in test_cpu_fast_kernels). Letters: b micro-batch, s sequence, a query
// heads, g kv heads, d head dim.
// q (b, s, a, d); kv (b, s, g, 2, d); out, dout (b, s, a, d); probs (b, a, s, s).
//
// Per (batch, query head), the query rows go in blocks of R (attention_row_block):
// scores S = Q_blk·K[0:r1]ᵀ/√d and O_blk = P·V[0:r1] are two GEMMs, the keys
// past the block's last row r1 (all masked) are never computed, and the
// softmax runs on the R × r1 block while it is still in cache.
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// Query rows per block at sequence length s: 64, fewer where 64 rows of s
// floats would pass 256 KiB (half of a small L2), at least 16.
std::int64_t attention_row_block(std::int64_t s);

// As attention_forward (attention.h): out and probs (upper triangle 0) overwritten.
void attention_forward_blas(const float* q, const float* kv, std::int64_t b, std::int64_t s, std::int64_t a,
                            std::int64_t g, std::int64_t head_dim, float* out, float* probs);

// As attention_backward (attention.h): dq and dkv overwritten.
void attention_backward_blas(const float* dout, const float* q, const float* kv, const float* probs,
                             std::int64_t b, std::int64_t s, std::int64_t a, std::int64_t g,
                             std::int64_t head_dim, float* dq, float* dkv);

}  // namespace ptdp::cpu
