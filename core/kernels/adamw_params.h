// The AdamW hyper-parameters of one step: vocabulary shared by the backend-
// neutral Ops interface and every backend's kernel, so ops.h needs no backend.
#pragma once

namespace ptdp {

struct AdamWParams {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // 0 for biases and layernorm parameters
  int step = 1;               // 1-based, for bias correction
};

}  // namespace ptdp
