// One pre-norm decoder layer with Megatron tensor parallelism: column-parallel
// Q, KV and first MLP projections, row-parallel attention output and second MLP
// projection, the f/g conjugate all-reduces between them. The block is GPT's
// (layernorm, GeLU, learned positions outside, biases) or Llama's (RMSNorm,
// SwiGLU, RoPE on q and k, grouped-query attention, no biases), or a mix, as
// the Model's architecture fields say (docs/llama-block.md).
// Letters: b micro-batch, s sequence, h hidden, a heads, g kv heads, d head
// dim, f MLP inner size, t tensor-parallel size; a_t = a/t query heads and
// g_t = g/t kv heads on this rank (g_t = 1 when t > g: the kv head of its
// group of t/g ranks, kv_sharing.h). Under sequence parallelism x, ln1, x2 and
// ln2 hold this rank's (b, s/t, h) token rows (token_split.h).
#pragma once
#include <memory>

#include "core/model/model_context.h"
#include "core/model/norm.h"
#include "core/model/param.h"
#include "core/model/weight_grads.h"

namespace ptdp {

// What backward needs of one micro-batch's pass through the layer.
struct LayerActs {
  Tensor x;                    // (b, s, h) layer input (kept under every recompute mode)
  NormActs ln1;                // (b, s, h) and its statistics
  Tensor q;                    // (b, s, a_t·d) queries, after RoPE
  Tensor kv;                   // (b, s, g_t·2·d) keys (after RoPE) and values
  Tensor attn_saved;           // backend's attention state (CPU: probs (b, a_t, s, s))
  Tensor attn;                 // (b, s, a_t·d) attention output, heads of this rank
  Tensor x2;                   // (b, s, h) residual after attention
  NormActs ln2;                // (b, s, h) and its statistics
  Tensor fc1;                  // (b, s, f/t) before GeLU; SwiGLU: (b, s, 2f/t) [gate | up]
  Tensor act;                  // (b, s, f/t) GeLU or SwiGLU output

  // Keep only the input (full recompute).
  void drop_all_but_input();
};

class TransformerLayer {
 public:
  TransformerLayer(ModelContext& ctx, int layer_index);

  // y (b, s, h) from x (b, s, h); fills acts. `keep_scores` false drops the
  // attention state (selective recompute recomputes it in backward).
  Tensor forward(const Tensor& x, LayerActs& acts, bool keep_scores);
  // dx (b, s, h) from dy (b, s, h); accumulates parameter gradients. With
  // `later` (zero-bubble B) the weight-gradient GEMMs are recorded there
  // instead (but a kv weight shared by t/g ranks, kv_sharing.h); norm and bias
  // gradients are still accumulated here.
  Tensor backward(const Tensor& dy, LayerActs& acts, DeferredWeightGrads* later = nullptr);

  ParamList params() const;

 private:
  // attention_block.cpp: fills ln1, q, kv, attn(_saved), x2 and ln2 (norm of x2,
  // fused with the residual add where the backend can).
  Tensor attention_block(LayerActs& acts, bool keep_scores);
  Tensor attention_backward(const Tensor& dx2, LayerActs& acts, DeferredWeightGrads* later);
  // (b, s, a_t, d) and (b, s, g_t, 2, d) views of q and kv.
  Tensor q_heads(const Tensor& q) const;
  Tensor kv_heads(const Tensor& kv) const;
  // mlp_block.cpp: from ln2 and x2, fills fc1 and act; returns the layer output.
  Tensor mlp_block(LayerActs& acts);
  Tensor mlp_backward(const Tensor& dy, LayerActs& acts, DeferredWeightGrads* later);
  // fc1's weight as the (rows, h) matrix of its GEMM (SwiGLU's (2, f/t, h) as (2f/t, h)).
  Tensor fc1_matrix() const;

  ModelContext& ctx_;
  NormParams ln1_;                          // (h) [, (h)] replicated
  std::unique_ptr<Param> q_w_, q_b_;        // (a_t·d, h), (a_t·d) column-parallel
  std::unique_ptr<Param> kv_w_, kv_b_;      // (g_t·2·d, h), (g_t·2·d) column-parallel or shared (kv_sharing.h)
  std::unique_ptr<Param> proj_w_, proj_b_;  // (h, a_t·d) row-parallel, (h) replicated
  NormParams ln2_;                          // (h) [, (h)] replicated
  std::unique_ptr<Param> fc1_w_, fc1_b_;    // (f/t, h), (f/t) column-parallel; SwiGLU (2, f/t, h), (2, f/t)
  std::unique_ptr<Param> fc2_w_, fc2_b_;    // (h, f/t) row-parallel, (h) replicated
};

}  // namespace ptdp
