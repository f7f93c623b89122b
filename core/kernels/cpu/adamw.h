// AdamW update over fp32 state (decoupled weight decay, bias-corrected moments).
#pragma once
#include <cstdint>

namespace ptdp::cpu {

struct AdamWParams {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // 0 for biases and layernorm parameters
  int step = 1;               // 1-based, for bias correction
};

// m = β1 m + (1-β1) g;  v = β2 v + (1-β2) g²;
// p -= lr · (m/(1-β1^step) / (sqrt(v/(1-β2^step)) + eps) + weight_decay · p).
template <class T>
void adamw_step(T* param, const T* grad, T* m, T* v, std::int64_t n, const AdamWParams& hp);

}  // namespace ptdp::cpu
