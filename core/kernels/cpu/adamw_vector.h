// AdamW, the fp32 fast path of adamw.h (same arguments and formula, results
// equal up to rounding): one clone per vector width (vector_lanes.h).
#pragma once
#include <cstdint>

#include "core/kernels/adamw_params.h"

namespace ptdp::cpu {

// param, grad, m, v: (n); m, v and param updated in place.
void adamw_step_vector(float* param, const float* grad, float* m, float* v, std::int64_t n, const AdamWParams& hp);

}  // namespace ptdp::cpu
