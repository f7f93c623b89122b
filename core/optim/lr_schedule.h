// The learning rate of an iteration: linear warmup, then constant, linear,
// cosine or WSD decay to min_lr, as Megatron-LM's OptimizerParamScheduler
// computes it from the same settings (OptimizerConfig, core/config/config.h).
#pragma once
#include <cstdint>

#include "core/config/config.h"

namespace ptdp {

// The learning rate iteration `iteration` (0-based) steps with. A pure
// function of the settings and the iteration, so a run resumed from a
// checkpoint (which saves the iteration) continues the schedule bit for bit.
// With W = lr_warmup_iters, D = lr_decay_iters and i = iteration:
//   i <= W (W > 0): lr_warmup_init + (lr - lr_warmup_init)·i/W
//   constant style: lr
//   i > D:          min_lr
//   else:           min_lr + (lr - min_lr)·c(r), r = (i - W)/(D - W), with
//                   c = 1 - r (linear), (1 + cos(π r))/2 (cosine), and for WSD
//                   1 before the anneal's last A = lr_wsd_decay_iters
//                   iterations, then of q = (i - (D - A))/A: 2·0.5^q - 1
//                   (exponential), 1 - q, (1 + cos(π q))/2, 1 - √q (minus_sqrt).
// Expects a validated config (validate(): D > W, A <= D - W).
double lr_at(const OptimizerConfig& schedule, std::int64_t iteration);

}  // namespace ptdp
