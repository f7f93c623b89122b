// Test helper: a model's sizes with Llama's block (RMSNorm, SwiGLU, RoPE, no
// biases, an untied output layer); kv_heads stays the caller's.
#pragma once
#include "core/config/model.h"

namespace ptdp::test {

inline Model llama_block(Model m) {
  m.norm = Norm::rmsnorm;
  m.activation = Activation::swiglu;
  m.position = Position::rope;
  m.bias = false;
  m.tied_embeddings = false;
  return m;
}

}  // namespace ptdp::test
