// Cross-entropy row pieces, fp32 fast paths (see cross_entropy_vector.h; the
// formulas are cross_entropy.cpp's). A NaN logit still gives a NaN sum: its own
// exponential is NaN whatever the row max.
#include "core/kernels/cpu/cross_entropy_vector.h"

#include <cmath>

#include "core/kernels/cpu/cross_entropy.h"
#include "core/kernels/cpu/vector_exp.h"
#include "core/kernels/cpu/vector_lanes.h"

namespace ptdp::cpu {

PTDP_VECTOR_CLONES void ce_row_max_vector(const float* logits, std::int64_t n, std::int64_t vt, float* row_max) {
  for (std::int64_t i = 0; i < n; ++i) row_max[i] = vt > 0 ? lane_max(logits + i * vt, vt) : -INFINITY;
}

PTDP_VECTOR_CLONES void ce_row_sum_exp_vector(const float* logits, std::int64_t n, std::int64_t vt,
                                              const float* row_max, float* sum_exp) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float* li = logits + i * vt;
    const float mx = row_max[i];
    sum_exp[i] = lane_sum(vt, [li, mx](std::int64_t j) { return vector_exp(li[j] - mx); });
  }
}

// dlogits = scale · (softmax − one_hot(target)); the target's column only in its shard.
PTDP_VECTOR_CLONES void ce_backward_vector(const float* logits, const std::int32_t* targets, const float* row_max,
                                           const float* sum_exp, std::int64_t n, std::int64_t vt,
                                           std::int64_t vocab_start, float scale, float* dlogits) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float* li = logits + i * vt;
    float* di = dlogits + i * vt;
    const float mx = row_max[i], factor = scale / sum_exp[i];
    PTDP_ELEMENTWISE
    for (std::int64_t j = 0; j < vt; ++j) di[j] = vector_exp(li[j] - mx) * factor;
    const std::int64_t col = ce_target_col(targets[i], vt, vocab_start);
    if (col >= 0) di[col] -= scale;
  }
}

}  // namespace ptdp::cpu
