// Parameter and FLOP counts of any block the model describes. For the paper's
// GPT block they are the paper's (Narayanan et al., SC'21): parameters by eq.
// (2) and model FLOPs per iteration by eq. (3), generalised to an MLP of any
// inner size f (f = 4h gives the paper's formulas exactly). Letters: B global
// batch, s sequence, l layers, h hidden, a heads, g kv heads, d = h/a head
// dimension, f MLP inner size, V vocabulary (unpadded, as the paper counts).
//
// The FLOP convention (kModelFlopsConvention, written into every result):
// 2 FLOPs a multiply-add of every matrix product: q (h×a·d), kv (h×2·g·d),
// attention output (a·d×h), the MLP's two matrices (gelu) or three (swiglu),
// the logits (h×V, counted once whether tied or not); causal attention counted
// in full (QKᵀ and AV, 4·s·h a token a layer forward, as eq. 3 and PaLM's
// appendix B; Megatron-LM's newer count halves it); backward twice forward;
// embeddings lookups, norms, activations, softmax and rope not counted.
#pragma once
#include <cstdint>

#include "core/config/model.h"
#include "core/config/plan.h"

namespace ptdp {

// The convention above, in one line, for results ("model_flops_convention").
inline constexpr const char* kModelFlopsConvention =
    "narayanan2021-eq3: 2 FLOPs per multiply-add of every matmul (q, kv with g heads, attention out, "
    "2 gelu or 3 swiglu MLP matrices, logits h*V once); causal attention counted in full (4*s*h per "
    "token per layer forward); backward = 2x forward; norms, activations, rope, embedding lookups not counted";

// Weights of one transformer layer: attention (q, kv, out), MLP, their biases
// when the model has them, the two norms (layernorm: gamma and beta; rmsnorm:
// gamma). GPT: 4h² + 2hf + f + 9h.
std::int64_t layer_parameter_count(const Model& m);
// Weights of one norm: gamma and beta (layernorm), gamma (rmsnorm).
std::int64_t norm_parameter_count(const Model& m);
// Word embedding (V×h), learned position embedding (s×h, none under rope), the
// untied output layer (V×h, none when tied), the final norm.
std::int64_t embedding_parameter_count(const Model& m);
// Every parameter: l layers plus embedding_parameter_count.
std::int64_t parameter_count(const Model& m);
// Eq. (2): 12·l·h²·(1 + 13/(12h) + (V+s)/(12·l·h)) for the GPT block, which
// excludes the final layernorm (2h); any block: parameter_count less its final norm.
double parameters_eq2(const Model& m);

// Weights a token multiplies by in one layer's forward: h·a·d + h·2·g·d + a·d·h + (2 or 3)·h·f
// (GPT: 4h² + 2hf). Forward FLOPs of a layer are 2·B·s times this plus the attention.
double layer_matmul_weights(const Model& m);
// Forward FLOPs of one transformer layer: 2·B·s·layer_matmul_weights + 4·B·s²·h
// (= 24Bsh² + 4Bs²h for GPT at f = 4h).
double layer_forward_flops(const Model& m, double batch);
// The attention scores and their product with V, forward, one layer: 4·B·s²·h
// (QKᵀ and AV over all a heads, causal mask not discounted).
double attention_scores_flops(const Model& m, double batch);
// Logit layer, forward and backward: 6·B·s·h·V (never recomputed).
double logit_flops(const Model& m, double batch);

// Eq. (3), with full recompute (forward counted twice): 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)).
double model_flops_eq3(const Model& m, double batch);
// Without recompute: 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)).
double model_flops_no_recompute(const Model& m, double batch);
// The paper-comparable model FLOPs of a run: eq. (3) under full recompute, else the 72 form.
double model_flops(const Model& m, double batch, Recompute r);
// FLOPs the hardware executes: the 72 form plus what recompute adds (a whole
// forward under full, the attention scores 4·B·s²·h per layer under selective).
double hardware_flops(const Model& m, double batch, Recompute r);

// FLOP utilisation of one run, as fractions of the precision's dense peak:
// MFU (model FLOPs utilisation) counts the FLOPs the model needs, without
// recompute (the 72 form), so it does not rise when work is redone; HFU
// (hardware FLOPs utilisation) counts the FLOPs executed (hardware_flops:
// the 96 form under full recompute, the 72 form plus the recomputed attention
// scores under selective). Both are per GPU per second over peak_tflops;
// {0, 0} when the iteration time, the GPU count or the peak is not positive.
struct Utilization {
  double mfu = 0;
  double hfu = 0;
};
Utilization utilization(const Model& m, const Plan& p, double iteration_s, double peak_tflops);

}  // namespace ptdp
