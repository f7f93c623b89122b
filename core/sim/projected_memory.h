// Memory of one rank of a Megatron-style mixed-precision run, for projections:
// 16-bit weights, fp32 gradients (accumulated and all-reduced in fp32 under
// fp16 too, as Megatron-LM's --accumulate-allreduce-grads-in-fp32 and ptdp's
// runtime do), fp32 master weights and Adam moments (sharded over d with the
// distributed optimizer): 18 bytes a parameter, and activations per layer by Korthikanti et al. 2022 ("Reducing
// Activation Recomputation in Large Transformer Models", §4), generalised to any
// MLP size and to runs without dropout, times what the schedule keeps in flight.
// Letters: n = b·s tokens, h hidden, f MLP inner size, S = b·(a/t)·s² scores.
#pragma once
#include <cstdint>

#include "core/config/machine.h"
#include "core/config/model.h"
#include "core/config/plan.h"
#include "core/metrics/memory_model.h"
#include "core/schedule/instruction.h"

namespace ptdp {

// Bytes one layer keeps for one micro-batch; at f = 4h with dropout and 16-bit
// activations: n·h·(10 + 24/t) + 5·S without recompute (Korthikanti eq. 2),
// n·h·(34/t) + 5·S with sequence parallelism, the score terms gone under
// selective recompute, and 2·n·h (2·n·h/t with SP) under full recompute.
std::int64_t projected_layer_bytes(const Model& m, const Plan& p);

// Parameters, gradients, optimizer state and peak activations of pipeline rank
// `pp_rank` whose iteration is `program`.
MemoryBreakdown projected_memory(const Model& m, const Plan& p, int pp_rank, const Program& program);

// Whether `total` bytes fit a device of `machine` (memory minus what the
// profile reserves for the CUDA context and communication buffers).
bool fits(const Machine& machine, std::int64_t total);

}  // namespace ptdp
