// The pluggable part of the memory model (memory_model.h): the bytes one
// micro-batch keeps between its forward and its backward, per decoder layer
// and for the embedding and output layer, by one of two formulas.
//   ptdp:        the tensors ptdp's own layers keep: a decoder layer's, the kept
//                bytes of its op records (core/layer_ops/layer_ops.h); the output
//                layer's tensor by tensor (lm_head.h, embedding.h, model_chunk.h).
//   korthikanti: Korthikanti et al. 2022 ("Reducing Activation Recomputation in
//                Large Transformer Models", §4) for Megatron-LM, the paper's
//                software, generalised to any MLP size and to runs without dropout.
// Letters: n = b·s tokens of a micro-batch, h hidden, f MLP inner size, a heads,
// t tensor-parallel size, V' padded vocabulary, e bytes of an activation element.
#pragma once
#include <cstdint>
#include <string>

#include "core/config/model.h"
#include "core/config/plan.h"
#include "core/config/rank_dims.h"
#include "core/tensor/dtype.h"

namespace ptdp {

enum class ActivationFormula : std::uint8_t { ptdp, korthikanti };
std::string to_string(ActivationFormula f);  // "ptdp" | "korthikanti"

// Element sizes and kernel choices that decide the bytes held.
struct MemoryTraits {
  int weight_bytes = 4;             // weights and activations: 4 fp32, 2 bf16/fp16
  bool master_weights = false;      // fp32 master copy beside 16-bit weights
  bool scores_materialized = true;  // unfused attention keeps probabilities (b, a/t, s, s);
                                    // fused keeps one fp32 log-sum-exp per (token, head)
};
// 16-bit weights with fp32 masters only where half precision runs (cuda).
MemoryTraits memory_traits(Device device, Precision precision, bool fused_attention);

// What one micro-batch keeps on a rank, in bytes.
struct ActivationBytes {
  std::int64_t layer = 0;      // one decoder layer, under the plan's recompute
  std::int64_t recompute = 0;  // more while backward recomputes one layer (0 without recompute)
  std::int64_t embedding = 0;  // the first stage's embedding, beside its layers
  std::int64_t head = 0;       // the last stage's output layer
  // What one decoder layer's zero-bubble W holds from its B (core/model/weight_grads.h):
  // each linear layer's output gradient, n·(2h + 3h/t + f/t)·e (qkv 3h/t, proj h,
  // fc1 f/t, fc2 h), and its forward input, n·(2h + h/t + f/t)·e (ln1 h, attn h/t,
  // ln2 h, GeLU f/t); for any block q a/t·d and kv 2·g_r·d for qkv, fc1 2f/t under
  // SwiGLU: activations the layer kept anyway, or, under full
  // recompute, the recomputed ones, which W keeps past B.
  std::int64_t weight_grad_dy = 0;
  std::int64_t weight_grad_x = 0;
};
// `r` is (m, p)'s RankDims, built once by the caller.
ActivationBytes activation_bytes(const Model& m, const Plan& p, const RankDims& r, const MemoryTraits& tr,
                                 ActivationFormula f);

// ptdp's formula, one layer: its forward records' kept bytes, at recompute none
// n·((4h + 4h/t + 2f/t)·e + 16) + the attention state for the GPT block; for any
// block n·((4h + 2·q + kv + fc1 + f/t)·e + stats).
std::int64_t layer_activation_bytes(const Model& m, const Plan& p, const RankDims& r, const MemoryTraits& tr);
// ptdp's formula, the output layer: n·((2h + V'/t)·e + 16) (12 under rmsnorm).
std::int64_t head_activation_bytes(const Model& m, const RankDims& r, const MemoryTraits& tr);

}  // namespace ptdp
