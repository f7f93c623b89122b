// The tiny GPT that multi-rank layouts are compared on against the single-rank
// run (tests/mpi/test_equivalence.cpp across processes, tests/unit/
// test_pipeline_pair.cpp across threads): 4 layers, hidden 64, 4 heads, seq 16,
// vocab 128, global batch 8 of micro-batches of 1, fp32.
#pragma once
#include "core/config/config.h"

namespace ptdp::test {

// Adam's eps is 1e-6, not 1e-8: the first Adam step moves a weight by
// lr·g/(|g| + eps), which for |g| ≲ eps turns the fp32 summation-order noise
// of g (relative 1e-7 of its terms, e.g. ~1e-10 for gradients that are zero in
// exact arithmetic, like the key bias's) into an O(lr) difference. With 1e-8,
// final_ln.bias differs by 1.4e-5 between layouts; with 1e-6 that noise
// stays below 1e-7 and the comparison measures the parallel logic.
inline Config equivalence_config() {
  Config c;
  c.model = {4, 64, 4, 16, 128, 0};
  c.plan.micro_batch = 1;
  c.plan.global_batch = 8;
  c.plan.precision = Precision::fp32;
  c.optimizer.eps = 1e-6;
  c.machine.gpus_per_node = 8;
  return c;
}

// The same sizes with the Llama block (endtoend/configs/tiny-llama.json's):
// 2 kv heads of 4 (grouped-query; at t = 4 each kv head is shared by 2 ranks),
// RMSNorm, SwiGLU of inner width 96, RoPE, no biases, an untied output layer.
inline void use_llama_block(Model& m) {
  m.kv_heads = 2;
  m.ffn_hidden = 96;
  m.norm = Norm::rmsnorm;
  m.activation = Activation::swiglu;
  m.position = Position::rope;
  m.bias = false;
  m.tied_embeddings = false;
}

}  // namespace ptdp::test
