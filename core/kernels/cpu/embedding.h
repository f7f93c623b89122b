// Token and position embedding, fp32 reference (T = float; double for tests).
// Letters: b micro-batch, s sequence, n = b·s tokens, h hidden,
// Vt = this rank's vocabulary shard [vocab_start, vocab_start + Vt).
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// out[n, h] = wte[tokens[i] - vocab_start, :] when the token is in this shard, else 0.
// wte: (Vt, h). Tokens outside the shard give zero rows (vocabulary-parallel lookup:
// the tensor-parallel all-reduce of the partial rows gives the full embedding).
template <class T>
void embedding_forward(const std::int32_t* tokens, std::int64_t n, const T* wte,
                       std::int64_t vocab_start, std::int64_t vocab_shard, std::int64_t h, T* out);

// dwte[tokens[i] - vocab_start, :] += dout[i, :] for tokens in this shard. dwte: (Vt, h).
template <class T>
void embedding_backward(const std::int32_t* tokens, std::int64_t n, const T* dout,
                        std::int64_t vocab_start, std::int64_t vocab_shard, std::int64_t h, T* dwte);

// x[b, s, h] += wpe[s, h] (learned position embedding; wpe holds at least s rows).
template <class T>
void position_forward(const T* wpe, std::int64_t b, std::int64_t s, std::int64_t h, T* x);

// dwpe[j, :] += sum over b of dx[b, j, :].
template <class T>
void position_backward(const T* dx, std::int64_t b, std::int64_t s, std::int64_t h, T* dwpe);

}  // namespace ptdp::cpu
