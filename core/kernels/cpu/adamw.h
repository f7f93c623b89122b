// AdamW update over fp32 state (decoupled weight decay, bias-corrected moments).
#pragma once
#include <cstdint>

#include "core/kernels/adamw_params.h"

namespace ptdp::cpu {

using ptdp::AdamWParams;

// m = β1 m + (1-β1) g;  v = β2 v + (1-β2) g²;
// p -= lr · (m/(1-β1^step) / (sqrt(v/(1-β2^step)) + eps) + weight_decay · p).
template <class T>
void adamw_step(T* param, const T* grad, T* m, T* v, std::int64_t n, const AdamWParams& hp);

}  // namespace ptdp::cpu
