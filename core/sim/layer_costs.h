// Per-pass costs of one tensor-parallel rank's share of the model: a decoder
// layer's forward, backward and recompute, the embedding on the first stage
// and the output layer on the last. Each cost is split into GEMMs, attention,
// memory-bound kernels (by bytes moved, fused or unfused) and tensor-parallel
// communication (not overlapped, as in Megatron-LM of the paper, unless
// plan.tp_comm_overlap pipelines it with the GEMMs).
// A layer is priced from its op records (core/layer_ops/layer_ops.h), for any
// block of model.h: each GEMM by its shape, the attention core by its own
// terms, the memory-bound records by their bytes and launches together, and
// each collective once per kind and size times the pass's count of it.
// Letters: b micro-batch, s sequence, n = b·s, h hidden, f MLP inner size,
// a heads, g kv heads, d = h/a head dim, t tensor-parallel size, V vocabulary.
#pragma once
#include "core/config/model.h"
#include "core/config/plan.h"
#include "core/config/rank_dims.h"
#include "core/sim/comm_model.h"
#include "core/sim/device_rates.h"

namespace ptdp {

struct PassCost {
  double gemm = 0;       // linear layers
  double attention = 0;  // the attention core (scores, softmax, dropout, context), or the fused kernel
  double memory = 0;     // other memory-bound kernels: layernorm, bias, GeLU, dropout, residual
  double tp_comm = 0;    // tensor-parallel all-reduces (all-gathers and reduce-scatters under SP)
  double dp_comm = 0;    // ZeRO-2/3's gathers and reduce-scatters its compute does not hide (sharded_comm.h)
  double compute() const { return gemm + attention + memory; }
  double total() const { return compute() + tp_comm + dp_comm; }
  PassCost& operator+=(const PassCost& o);
  PassCost& operator-=(const PassCost& o);
};
PassCost operator*(double k, const PassCost& c);

struct LayerCosts {
  PassCost forward;
  PassCost backward;   // without recompute
  // The part of `backward` a zero-bubble W runs: the four weight-gradient
  // GEMMs (dW (out, in) = dyᵀ · x over the n rows). B runs the rest: the data
  // gradients, attention, element-wise work (bias and layernorm gradients too)
  // and the tensor-parallel all-reduces.
  PassCost weight_grad;
  PassCost recompute;  // what backward re-runs first: a whole forward (full), the attention core (selective)
};

struct EdgeCosts {
  PassCost embedding_forward, embedding_backward;  // first stage
  PassCost head_forward, head_backward;            // last stage: final layernorm, logits, cross-entropy
};

// `r` is (m, p)'s RankDims, built once by the caller (CostModel).
LayerCosts layer_costs(const Model& m, const Plan& p, const RankDims& r, const DeviceRates& dev,
                       const CommModel& comm, Placement tp);
EdgeCosts edge_costs(const Model& m, const Plan& p, const RankDims& r, const DeviceRates& dev, const CommModel& comm,
                     Placement tp);

}  // namespace ptdp
