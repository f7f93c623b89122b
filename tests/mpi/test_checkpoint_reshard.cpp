// Checkpoint resharding under mpirun -np 8: a save of one layout loads into
// another (tensor-parallel shards split and merged, pipeline stages regrouped,
// the optimizer state replicated or sharded over d) and the next two
// iterations' losses match the uninterrupted single-rank run within 1e-5
// relative (the equivalence tests' tolerance: fp32 summation order differs
// between layouts). A layout of N ranks uses the first N; the others wait.
// The Llama block's too: its kv heads shared by pairs of ranks at t = 4
// (written once) saved into or loaded from layouts that split them. And every
// dp_sharding: a ZeRO-2 or ZeRO-3 save (each rank's owned blocks of its units)
// loads under another sharding and d, and the other way round. Every
// save passes the checks a load makes before any work (checkpoint_problems).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "core/checkpoint/checkpoint.h"
#include "core/comm/process_groups.h"
#include "core/comm/single_rank.h"
#include "core/data/token_source.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/runtime/trainer.h"
#include "tests/checkpoint_test_util.h"
#include "tests/equivalence_config.h"
#include "tests/mpi/mpi_env.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;

constexpr int kReshardSaveAt = 3, kReshardIterations = 5;
constexpr DpSharding kNone = DpSharding::none, kOptimizer = DpSharding::optimizer, kGradients = DpSharding::gradients,
                     kParameters = DpSharding::parameters;

struct Shape3 {
  int t, p, dp;
  DpSharding sharding = DpSharding::none;
  bool llama = false;  // the Llama block (use_llama_block)
};

Config reshard_config(const Shape3& s) {
  Config c = test::equivalence_config();
  if (s.llama) test::use_llama_block(c.model);
  c.plan.tp = s.t;
  c.plan.pp = s.p;
  c.plan.dp = s.dp;
  c.plan.dp_sharding = s.sharding;
  return c;
}

// Iterations [from, to) of `s` on `comm`'s ranks, loading `load` first or saving into `save` after.
std::vector<double> reshard_train(const Shape3& s, Communicator& comm, int from, int to, const fs::path& load,
                                  const fs::path& save) {
  return test::train_span(reshard_config(s), comm, from, to, load, save);
}

const std::vector<double>& reshard_reference(bool llama) {
  const auto run = [](bool block) {
    SingleRankCommunicator one;
    return reshard_train({1, 1, 1, DpSharding::none, block}, one, 0, kReshardIterations, {}, {});
  };
  static const std::vector<double> gpt = run(false), llama_ref = run(true);
  return llama ? llama_ref : gpt;
}

// Runs `f` on the first n ranks of the world (the others skip it), then all meet.
template <class F>
void on_first_ranks(int n, F f) {
  Communicator& world = test::mpi_world();
  auto sub = world.split(world.rank() < n ? 0 : 1, world.rank());
  if (world.rank() < n) f(*sub);
  world.barrier();
}

struct Reshard {
  Shape3 saved, loaded;
};
void PrintTo(const Reshard& r, std::ostream* os) {
  *os << "(" << r.saved.t << "," << r.saved.p << "," << r.saved.dp << "," << to_string(r.saved.sharding) << ")->("
      << r.loaded.t << "," << r.loaded.p << "," << r.loaded.dp << "," << to_string(r.loaded.sharding) << ")"
      << (r.saved.llama ? " llama" : "");
}

class CheckpointReshard : public testing::TestWithParam<Reshard> {};

TEST_P(CheckpointReshard, ContinuesTheUninterruptedRun) {
  const Reshard& c = GetParam();
  Communicator& world = test::mpi_world();
  reshard_reference(c.saved.llama);
  // One folder for all ranks: rank 0's pid names it.
  const double pid = world.all_reduce_host(world.rank() == 0 ? static_cast<double>(::getpid()) : 0.0, ReduceOp::max);
  const fs::path dir = fs::temp_directory_path() / ("ptdp-test-reshard-" + std::to_string(static_cast<long>(pid)));
  if (world.rank() == 0) fs::remove_all(dir);
  world.barrier();
  on_first_ranks(c.saved.t * c.saved.p * c.saved.dp, [&](Communicator& sub) { reshard_train(c.saved, sub, 0, kReshardSaveAt, {}, dir); });
  if (world.rank() == 0) {  // every element of a kv weight written once, shared or split
    // and the save passes every check a load makes first (coverage of each parameter, each piece's tensors)
    const ConfigErrors problems = checkpoint_problems(dir, reshard_config(c.saved), "--load");
    EXPECT_TRUE(problems.empty()) << (problems.empty() ? "" : problems.front().message);
    std::int64_t written = 0, full = 0;
    for (const ShardRecord& r : read_manifest(resolve_checkpoint(dir) / kManifestName).shards)
      for (const ShardPiece& piece : r.pieces)
        if (piece.param == "layers.0.kv.weight") written += piece.count, full = shape_numel(piece.full_shape);
    EXPECT_EQ(written, full);
  }
  on_first_ranks(c.loaded.t * c.loaded.p * c.loaded.dp, [&](Communicator& sub) {
    const std::vector<double> losses = reshard_train(c.loaded, sub, kReshardSaveAt, kReshardIterations, dir, {});
    for (std::size_t i = 0; i < losses.size(); ++i) {
      const double ref = reshard_reference(c.saved.llama)[kReshardSaveAt + i];
      EXPECT_NEAR(losses[i], ref, 1e-5 * std::abs(ref)) << "iteration " << kReshardSaveAt + i << " on rank " << sub.rank();
    }
  });
  if (world.rank() == 0) fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Layouts, CheckpointReshard,
                         testing::Values(Reshard{{1, 1, 1}, {1, 2, 1}}, Reshard{{2, 2, 1}, {2, 1, 2}},
                                         Reshard{{1, 1, 1}, {2, 2, 2}}, Reshard{{2, 2, 1}, {2, 2, 2, kOptimizer}},
                                         Reshard{{2, 2, 2, kOptimizer}, {1, 2, 1}},
                                         Reshard{{4, 1, 1, kNone, true}, {1, 2, 1, kNone, true}},
                                         Reshard{{2, 1, 1, kNone, true}, {4, 1, 2, kOptimizer, true}},
                                         // Across ZeRO-2/3 and d: owned blocks of units saved, any layout loaded.
                                         Reshard{{2, 2, 2, kGradients}, {1, 1, 2, kParameters}},
                                         Reshard{{1, 1, 2, kParameters}, {2, 2, 2, kOptimizer}},
                                         Reshard{{2, 1, 2, kParameters}, {1, 2, 2, kGradients}},
                                         Reshard{{1, 1, 1}, {2, 2, 2, kParameters}},
                                         Reshard{{2, 2, 2, kParameters}, {1, 1, 1}}));

}  // namespace
}  // namespace ptdp
