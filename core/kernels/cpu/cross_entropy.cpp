// Vocabulary-parallel cross-entropy pieces, fp32 reference (see cross_entropy.h).
// Letters: n rows (tokens), Vt shard width; logits, dlogits (n, Vt) cover the
// vocabulary ids [vocab_start, vocab_start + Vt). row_max and sum_exp are global.
#include "core/kernels/cpu/cross_entropy.h"

#include <algorithm>
#include <cmath>

namespace ptdp::cpu {
// row_max (n) = max over the shard's Vt columns.
template <class T>
void ce_row_max(const T* logits, std::int64_t n, std::int64_t vt, T* row_max) {
  for (std::int64_t i = 0; i < n; ++i) {
    T mx = -INFINITY;
    for (std::int64_t j = 0; j < vt; ++j) mx = std::max(mx, logits[i * vt + j]);
    row_max[i] = mx;
  }
}

// sum_exp (n) = Σ_j exp(logits[i, j] − row_max[i]) over the shard.
template <class T>
void ce_row_sum_exp(const T* logits, std::int64_t n, std::int64_t vt, const T* row_max,
                    T* sum_exp) {
  for (std::int64_t i = 0; i < n; ++i) {
    T sum = 0;
    for (std::int64_t j = 0; j < vt; ++j) sum += std::exp(logits[i * vt + j] - row_max[i]);
    sum_exp[i] = sum;
  }
}

// target_logit (n) = the target's logit when in this shard, else 0 (summed over shards).
template <class T>
void ce_target_logit(const T* logits, const std::int32_t* targets, std::int64_t n, std::int64_t vt,
                     std::int64_t vocab_start, T* target_logit) {
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t col = ce_target_col(targets[i], vt, vocab_start);
    target_logit[i] = col >= 0 ? logits[i * vt + col] : T(0);
  }
}

// loss (n) = log(sum_exp) + row_max − target_logit.
template <class T>
void ce_loss(const T* row_max, const T* sum_exp, const T* target_logit, std::int64_t n, T* loss) {
  for (std::int64_t i = 0; i < n; ++i)
    loss[i] = std::log(sum_exp[i]) + row_max[i] - target_logit[i];
}

// dlogits (n, Vt) = scale · (softmax − one_hot(target)), softmax from the global max and sum.
template <class T>
void ce_backward(const T* logits, const std::int32_t* targets, const T* row_max, const T* sum_exp,
                 std::int64_t n, std::int64_t vt, std::int64_t vocab_start, T scale, T* dlogits) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T inv_sum = T(1) / sum_exp[i];
    for (std::int64_t j = 0; j < vt; ++j) {
      dlogits[i * vt + j] = scale * std::exp(logits[i * vt + j] - row_max[i]) * inv_sum;
    }
    const std::int64_t col = ce_target_col(targets[i], vt, vocab_start);
    if (col >= 0) dlogits[i * vt + col] -= scale;
  }
}

#define PTDP_INSTANTIATE(T)                                                                     \
  template void ce_row_max<T>(const T*, std::int64_t, std::int64_t, T*);                        \
  template void ce_row_sum_exp<T>(const T*, std::int64_t, std::int64_t, const T*, T*);          \
  template void ce_target_logit<T>(const T*, const std::int32_t*, std::int64_t, std::int64_t,   \
                                   std::int64_t, T*);                                           \
  template void ce_loss<T>(const T*, const T*, const T*, std::int64_t, T*);                     \
  template void ce_backward<T>(const T*, const std::int32_t*, const T*, const T*, std::int64_t, \
                               std::int64_t, std::int64_t, T, T*);
PTDP_INSTANTIATE(float)
PTDP_INSTANTIATE(double)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cpu
