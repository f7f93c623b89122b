// The row pieces of vocabulary-parallel cross-entropy, fp32 fast paths of
// cross_entropy.h (same arguments, results equal up to rounding): exp through
// vector_exp, row sums in 16 lanes, one clone per vector width. Letters: n rows,
// vt shard width; logits, dlogits (n, vt).
#pragma once
#include <cstdint>

namespace ptdp::cpu {

void ce_row_max_vector(const float* logits, std::int64_t n, std::int64_t vt, float* row_max);
void ce_row_sum_exp_vector(const float* logits, std::int64_t n, std::int64_t vt, const float* row_max,
                           float* sum_exp);
void ce_backward_vector(const float* logits, const std::int32_t* targets, const float* row_max, const float* sum_exp,
                        std::int64_t n, std::int64_t vt, std::int64_t vocab_start, float scale, float* dlogits);

}  // namespace ptdp::cpu
