// Several ranks of one run as threads of one process, over an in-process
// world (host or device mode): each thread builds its own backend, splits the
// world into its process groups and trains through the Trainer. Shared by the
// CPU pair test (tests/unit/test_pipeline_pair.cpp) and its GPU twin
// (tests/gpu/test_pipeline_pair_gpu.cpp).
#pragma once
#include <gtest/gtest.h>

#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "core/comm/process_groups.h"
#include "core/data/token_source.h"
#include "core/runtime/trainer.h"

namespace ptdp::test {

// The topology of cfg's plan (8 GPUs a node, as the equivalence config).
inline Topology plan_topology(const Config& cfg) { return {cfg.plan.tp, cfg.plan.pp, cfg.plan.dp, 8}; }

// The losses of `iterations` steps of cfg on the rank `world` belongs to.
inline std::vector<double> train_rank(const Config& cfg, Ops& ops, Communicator& world, int iterations) {
  ProcessGroups groups = make_process_groups(world, plan_topology(cfg), cfg.plan.tp_comm_overlap);
  auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  Trainer trainer(cfg, ops, groups, *data);
  std::vector<double> losses;
  for (int i = 0; i < iterations; ++i) losses.push_back(trainer.step(i).loss);
  return losses;
}

// Runs rank(r, *world[r]) → its losses in one thread per rank; rethrows the
// first rank's failure once all have ended (a rank whose peer failed gives up
// at its communicator's deadline). Every rank must report the same losses
// (the trainer reduces them over the world); returns rank 0's.
template <class Rank>
std::vector<double> run_rank_threads(std::vector<std::unique_ptr<Communicator>>& world, Rank rank) {
  std::vector<std::vector<double>> losses(world.size());
  std::vector<std::exception_ptr> errors(world.size());
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < world.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        losses[r] = rank(static_cast<int>(r), *world[r]);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  for (std::size_t r = 1; r < losses.size(); ++r) EXPECT_EQ(losses[r], losses[0]) << "rank " << r;
  return losses[0];
}

}  // namespace ptdp::test
