// Vocabulary-parallel cross-entropy pieces, fp32 reference. Each rank holds
// logits for its vocabulary shard only; the caller all-reduces the per-row max
// and sum of exponentials over the tensor-parallel group, so full logits are
// never gathered. Letters: n rows (tokens), Vt shard width, [vocab_start, +Vt).
#pragma once
#include <cstdint>

namespace ptdp::cpu {

// Column of the target inside this shard, or -1 when the target lies elsewhere.
inline std::int64_t ce_target_col(std::int32_t target, std::int64_t vt, std::int64_t vocab_start) {
  const std::int64_t col = static_cast<std::int64_t>(target) - vocab_start;
  return (col >= 0 && col < vt) ? col : -1;
}

// row_max[i] = max_j logits[i, j].
template <class T>
void ce_row_max(const T* logits, std::int64_t n, std::int64_t vt, T* row_max);

// sum_exp[i] = sum_j exp(logits[i, j] - row_max[i]) (row_max is the global max).
template <class T>
void ce_row_sum_exp(const T* logits, std::int64_t n, std::int64_t vt, const T* row_max, T* sum_exp);

// target_logit[i] = logits[i, targets[i] - vocab_start] when the target is in the shard, else 0.
template <class T>
void ce_target_logit(const T* logits, const std::int32_t* targets, std::int64_t n, std::int64_t vt,
                     std::int64_t vocab_start, T* target_logit);

// loss[i] = log(sum_exp[i]) + row_max[i] - target_logit[i] (all three global).
template <class T>
void ce_loss(const T* row_max, const T* sum_exp, const T* target_logit, std::int64_t n, T* loss);

// dlogits[i, j] = scale · (exp(logits[i, j] - row_max[i]) / sum_exp[i] - [j is the target]).
template <class T>
void ce_backward(const T* logits, const std::int32_t* targets, const T* row_max, const T* sum_exp,
                 std::int64_t n, std::int64_t vt, std::int64_t vocab_start, T scale, T* dlogits);

}  // namespace ptdp::cpu
