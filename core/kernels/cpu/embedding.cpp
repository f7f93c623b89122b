// Token and position embedding, fp32 reference (see embedding.h).
// Letters: n = b·s tokens, h hidden, Vt vocabulary shard [vocab_start, vocab_start + Vt).
#include "core/kernels/cpu/embedding.h"

namespace ptdp::cpu {
namespace {

// Row of this shard holding the token, or -1 when the token lies outside the shard.
std::int64_t shard_row(std::int32_t token, std::int64_t vocab_start, std::int64_t vocab_shard) {
  const std::int64_t row = static_cast<std::int64_t>(token) - vocab_start;
  return (row >= 0 && row < vocab_shard) ? row : -1;
}

}  // namespace

// out (n, h) <- wte (Vt, h) rows, zero rows for tokens outside the shard.
template <class T>
void embedding_forward(const std::int32_t* tokens, std::int64_t n, const T* wte,
                       std::int64_t vocab_start, std::int64_t vocab_shard, std::int64_t h, T* out) {
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t row = shard_row(tokens[i], vocab_start, vocab_shard);
    for (std::int64_t j = 0; j < h; ++j) {
      out[i * h + j] = row >= 0 ? wte[row * h + j] : T(0);
    }
  }
}

// dwte (Vt, h) += dout (n, h) rows scattered by token.
template <class T>
void embedding_backward(const std::int32_t* tokens, std::int64_t n, const T* dout,
                        std::int64_t vocab_start, std::int64_t vocab_shard, std::int64_t h,
                        T* dwte) {
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t row = shard_row(tokens[i], vocab_start, vocab_shard);
    if (row < 0) continue;
    for (std::int64_t j = 0; j < h; ++j) dwte[row * h + j] += dout[i * h + j];
  }
}

// x (b, s, h) += wpe (s, h) broadcast over b.
template <class T>
void position_forward(const T* wpe, std::int64_t b, std::int64_t s, std::int64_t h, T* x) {
  for (std::int64_t ib = 0; ib < b; ++ib) {
    for (std::int64_t j = 0; j < s * h; ++j) x[ib * s * h + j] += wpe[j];
  }
}

// dwpe (s, h) += sum over b of dx (b, s, h).
template <class T>
void position_backward(const T* dx, std::int64_t b, std::int64_t s, std::int64_t h, T* dwpe) {
  for (std::int64_t ib = 0; ib < b; ++ib) {
    for (std::int64_t j = 0; j < s * h; ++j) dwpe[j] += dx[ib * s * h + j];
  }
}

#define PTDP_INSTANTIATE(T)                                                                      \
  template void embedding_forward<T>(const std::int32_t*, std::int64_t, const T*, std::int64_t,  \
                                     std::int64_t, std::int64_t, T*);                            \
  template void embedding_backward<T>(const std::int32_t*, std::int64_t, const T*, std::int64_t, \
                                      std::int64_t, std::int64_t, T*);                           \
  template void position_forward<T>(const T*, std::int64_t, std::int64_t, std::int64_t, T*);     \
  template void position_backward<T>(const T*, std::int64_t, std::int64_t, std::int64_t, T*);
PTDP_INSTANTIATE(float)
PTDP_INSTANTIATE(double)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cpu
