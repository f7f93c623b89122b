// Training a span of iterations around a checkpoint, for the checkpoint tests
// (tests/unit/test_checkpoint.cpp over threads, tests/mpi/test_checkpoint_reshard.cpp
// over MPI ranks): load first, run, save after.
#pragma once
#include <filesystem>
#include <vector>

#include "core/checkpoint/checkpoint.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "tests/pipeline_pair_util.h"

namespace ptdp::test {

// Iterations [from, to) of cfg on the rank `comm` belongs to (its layout's
// world): loads `load` first and saves into `save` after, where given.
inline std::vector<double> train_span(const Config& cfg, Communicator& comm, int from, int to,
                                      const std::filesystem::path& load, const std::filesystem::path& save) {
  CpuAllocator alloc(comm.rank());
  CpuOps ops(alloc);
  ProcessGroups groups = make_process_groups(comm, plan_topology(cfg));
  auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  Trainer trainer(cfg, ops, groups, *data);
  if (!load.empty()) load_checkpoint(trainer, comm, load);
  std::vector<double> losses;
  for (int i = from; i < to; ++i) losses.push_back(trainer.step(i).loss);
  if (!save.empty()) save_checkpoint(trainer, comm, save, to, 0, data->describe());
  return losses;
}

}  // namespace ptdp::test
