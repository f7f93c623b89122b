// One pre-LayerNorm GPT decoder layer with Megatron tensor parallelism:
// column-parallel QKV and first MLP projection, row-parallel attention output
// and second MLP projection, the f/g conjugate all-reduces between them.
// Letters: b micro-batch, s sequence, h hidden, a heads, f MLP inner size,
// t tensor-parallel size; shapes below are per rank. Under sequence parallelism
// x, ln1, x2 and ln2 hold this rank's (b, s/t, h) token rows (token_split.h).
#pragma once
#include <memory>

#include "core/model/layernorm.h"
#include "core/model/model_context.h"
#include "core/model/param.h"
#include "core/model/weight_grads.h"

namespace ptdp {

// What backward needs of one micro-batch's pass through the layer.
struct LayerActs {
  Tensor x;                    // (b, s, h) layer input (kept under every recompute mode)
  NormActs ln1;                // (b, s, h) and its statistics
  Tensor qkv;                  // (b, s, 3h/t): a/t heads × (q, k, v) × head dim
  Tensor attn_saved;           // backend's attention state (CPU: probs (b, a/t, s, s))
  Tensor attn;                 // (b, s, h/t) attention output, heads of this rank
  Tensor x2;                   // (b, s, h) residual after attention
  NormActs ln2;                // (b, s, h) and its statistics
  Tensor fc1;                  // (b, s, f/t) before GeLU
  Tensor gelu;                 // (b, s, f/t)

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
  // `later` (zero-bubble B) the four weight-gradient GEMMs are recorded there
  // instead; layernorm and bias gradients are still accumulated here.
  Tensor backward(const Tensor& dy, LayerActs& acts, DeferredWeightGrads* later = nullptr);

  ParamList params() const;

 private:
  // Fills ln1, qkv, attn(_saved), x2 and ln2 (LN(x2), fused with the residual add).
  Tensor attention_block(LayerActs& acts, bool keep_scores);
  // From ln2 and x2: fills fc1, gelu; returns the layer output.
  Tensor mlp_block(LayerActs& acts);
  Tensor mlp_backward(const Tensor& dy, LayerActs& acts, DeferredWeightGrads* later);
  Tensor attention_backward(const Tensor& dx2, LayerActs& acts, DeferredWeightGrads* later);

  ModelContext& ctx_;
  int heads_;  // a/t on this rank
  std::unique_ptr<Param> ln1_g_, ln1_b_;    // (h), (h) replicated
  std::unique_ptr<Param> qkv_w_, qkv_b_;    // (3h/t, h), (3h/t) column-parallel
  std::unique_ptr<Param> proj_w_, proj_b_;  // (h, h/t) row-parallel, (h) replicated
  std::unique_ptr<Param> ln2_g_, ln2_b_;    // (h), (h) replicated
  std::unique_ptr<Param> fc1_w_, fc1_b_;    // (f/t, h), (f/t) column-parallel
  std::unique_ptr<Param> fc2_w_, fc2_b_;    // (h, f/t) row-parallel, (h) replicated
};

}  // namespace ptdp
