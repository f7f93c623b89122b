// Training a span of iterations around a checkpoint, for the checkpoint tests
// (tests/unit/test_checkpoint.cpp and test_checkpoint_folders.cpp over threads,
// tests/mpi/test_checkpoint_reshard.cpp over MPI ranks): load first, run, save after.
#pragma once
#include <filesystem>
#include <vector>

#include "core/checkpoint/checkpoint.h"
#include "core/comm/in_process_communicator.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/runtime/trainer.h"
#include "tests/pipeline_pair_util.h"

namespace ptdp::test {

// Iterations [from, to) of cfg on the rank `comm` belongs to (its layout's
// world): loads `load` first and saves into `save` after (pruned as `options`
// says), where given.
inline std::vector<double> train_span(const Config& cfg, Communicator& comm, int from, int to,
                                      const std::filesystem::path& load, const std::filesystem::path& save,
                                      const SaveOptions& options = {}) {
  CpuAllocator alloc(comm.rank());
  CpuOps ops(alloc);
  ProcessGroups groups = make_process_groups(comm, plan_topology(cfg));
  auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  Trainer trainer(cfg, ops, groups, *data);
  if (!load.empty()) load_checkpoint(trainer.training_state(), comm, load);
  std::vector<double> losses;
  for (int i = from; i < to; ++i) losses.push_back(trainer.step(i).loss);
  if (!save.empty()) save_checkpoint(trainer.training_state(), comm, save, to, options, data->describe());
  return losses;
}

// train_span on every rank of cfg's layout, the ranks threads of an in-process
// world; rank 0's losses. Throws what a rank threw.
inline std::vector<double> train_span_on_threads(const Config& cfg, int from, int to,
                                                 const std::filesystem::path& load = {},
                                                 const std::filesystem::path& save = {},
                                                 const SaveOptions& options = {}) {
  auto world = make_in_process_world(cfg.plan.world_size(), 120, nullptr);
  return run_rank_threads(world,
                          [&](int, Communicator& comm) { return train_span(cfg, comm, from, to, load, save, options); });
}

}  // namespace ptdp::test
