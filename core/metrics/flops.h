// The paper's counts (Narayanan et al., SC'21): parameters by eq. (2) and model
// FLOPs per iteration by eq. (3), generalised to an MLP of any inner size f
// (f = 4h gives the paper's formulas exactly). Letters: B global batch, s
// sequence, l layers, h hidden, f MLP inner size, V vocabulary.
#pragma once
#include <cstdint>

#include "core/config/model.h"
#include "core/config/plan.h"

namespace ptdp {

// Eq. (2): 12·l·h²·(1 + 13/(12h) + (V+s)/(12·l·h)); per layer 4h² + 2hf + f + 9h,
// plus the word and position embeddings. Excludes the final layernorm (2h).
double parameters_eq2(const Model& m);
// Every parameter ptdp's GPT holds: eq. (2) plus the final layernorm.
std::int64_t parameter_count(const Model& m);

// Forward FLOPs of one transformer layer: 2·B·s·(4h² + 2hf) + 4·B·s²·h (= 24Bsh² + 4Bs²h at f = 4h).
double layer_forward_flops(const Model& m, double batch);
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
