// Single-rank CPU training for the unit tests: the losses of the first
// `iterations` iterations of a config on the fp32 reference backend.
#pragma once
#include <functional>
#include <vector>

#include "core/comm/process_groups.h"
#include "core/comm/single_rank.h"
#include "core/data/token_source.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/runtime/trainer.h"

namespace ptdp::test {

// `after_step` (may be empty) sees the trainer after each iteration.
inline std::vector<double> cpu_train_losses(const Config& cfg, int iterations,
                                            const std::function<void(Trainer&, int)>& after_step = {}) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  SingleRankCommunicator world;
  ProcessGroups groups = make_process_groups(world, {1, 1, 1, 1});
  auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  Trainer trainer(cfg, ops, groups, *data);
  std::vector<double> losses;
  for (int i = 0; i < iterations; ++i) {
    losses.push_back(trainer.step(i).loss);
    if (after_step) after_step(trainer, i);
  }
  return losses;
}

}  // namespace ptdp::test
