// Measured memory of data-parallel sharding under mpirun (the first 2 ranks):
// a tiny 8-layer GPT at d = 2 (fp32, the CPU allocator's accounting) with
// dp_sharding none, gradients (ZeRO-2) and parameters (ZeRO-3). With N a
// rank's parameter elements (all of them at t = p = 1), the state a rank holds
// between iterations is, in fp32 bytes:
//   none:        weights 4N + gradient buffer 4N + moments 8N       = 16N
//   gradients:   weights 4N + owned gradients 4N/d + moments 8N/d   = 10N at d = 2
//   parameters:  owned weights 4N/d + owned gradients 4N/d + moments 8N/d = 8N
// (each unit padded to a multiple of d: at most d − 1 elements per unit more).
// The live bytes after an iteration must differ by exactly that, and the
// peak of the next iteration by that less the transient buffers the sharded
// run may hold at once (derived from the largest unit U, in elements):
//   gradients: the part's bound units (≤ 2: its own and the shared tied word)
//              plus kFlushesInFlight reduce-scatters each holding (c) and (c/d):
//              (2 + kFlushesInFlight·(1 + 1/d))·U fp32;
//   parameters: that, plus the part's gathered units (≤ 2) and the next
//              part's prefetched ones (≤ 2): 4U more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "core/comm/process_groups.h"
#include "core/data/token_source.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/optim/sharded_parts.h"
#include "core/runtime/trainer.h"
#include "tests/equivalence_config.h"
#include "tests/mpi/mpi_env.h"

namespace ptdp {
namespace {

constexpr int kD = 2;

Config memory_config(DpSharding sharding) {
  Config c = test::equivalence_config();
  c.model.layers = 8;
  c.plan.dp = kD;
  c.plan.dp_sharding = sharding;
  return c;
}

struct Measured {
  std::int64_t live = 0;  // after iteration 0: the state
  std::int64_t peak = 0;  // during iteration 1
};

Measured measure(DpSharding sharding, Communicator& sub) {
  const Config cfg = memory_config(sharding);
  CpuAllocator alloc(sub.rank());
  CpuOps ops(alloc);
  ProcessGroups groups = make_process_groups(sub, {1, 1, kD, 8}, false);
  auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  Trainer trainer(cfg, ops, groups, *data);
  trainer.step(0);
  Measured m;
  m.live = alloc.stats().live_bytes;
  alloc.reset_peak();
  trainer.step(1);
  m.peak = alloc.stats().peak_bytes;
  return m;
}

// N and the largest unit U and the unit count of the layout (its padding), from an unsharded model.
struct Sizes {
  std::int64_t n = 0, largest_unit = 0, units = 0;
};

Sizes sizes(Communicator& tp) {
  const Config cfg = memory_config(DpSharding::none);
  CpuAllocator alloc(0);
  CpuOps ops(alloc);
  ModelContext ctx{ops, tp, cfg.model, cfg.plan};
  RankModel model(ctx, 0);
  const ShardLayout layout = shard_layout(model, kD);
  Sizes s{model.num_parameters(), 0, static_cast<std::int64_t>(layout.units.size())};
  for (const ShardUnit& u : layout.units) s.largest_unit = std::max(s.largest_unit, u.count);
  return s;
}

TEST(ShardingMemory, FallsByTheStateTheShardingRemoves) {
  Communicator& world = test::mpi_world();
  ASSERT_GE(world.size(), kD) << "run under mpirun -np " << kD << " or more";
  auto sub = world.split(world.rank() < kD ? 0 : 1, world.rank());
  if (world.rank() < kD) {
    auto tp = sub->split(sub->rank(), 0);  // a group of one
    const Sizes s = sizes(*tp);
    const Measured none = measure(DpSharding::none, *sub), zero2 = measure(DpSharding::gradients, *sub),
                   zero3 = measure(DpSharding::parameters, *sub);
    const std::int64_t f32 = 4, n = s.n, pad = s.units * (kD - 1) * f32;
    const std::int64_t saved2 = (4 * n - 4 * n / kD) + (8 * n - 8 * n / kD);  // whole gradients and moments → 1/d
    const std::int64_t saved3 = saved2 + (4 * n - 4 * n / kD);                // and the weights
    const double flushes = static_cast<double>(ShardedParts::kFlushesInFlight) * (1.0 + 1.0 / kD);
    const auto transient2 = static_cast<std::int64_t>((2 + flushes) * static_cast<double>(s.largest_unit * f32));
    const std::int64_t transient3 = transient2 + 4 * s.largest_unit * f32;
    if (sub->rank() == 0)
      std::printf("N %lld, U %lld: live none %lld, gradients %lld, parameters %lld; peak none %lld, gradients %lld, "
                  "parameters %lld; expected savings %lld, %lld\n",
                  static_cast<long long>(n), static_cast<long long>(s.largest_unit), static_cast<long long>(none.live),
                  static_cast<long long>(zero2.live), static_cast<long long>(zero3.live),
                  static_cast<long long>(none.peak), static_cast<long long>(zero2.peak),
                  static_cast<long long>(zero3.peak), static_cast<long long>(saved2), static_cast<long long>(saved3));
    // The state: exactly the predicted bytes, give or take the units' padding (and 3 (N/d) rows' rounding).
    const auto near = [](std::int64_t got, std::int64_t want, std::int64_t slack) {
      EXPECT_NEAR(static_cast<double>(got), static_cast<double>(want), static_cast<double>(slack));
    };
    near(none.live - zero2.live, saved2, pad + 3 * f32);
    near(none.live - zero3.live, saved3, 2 * pad + 4 * f32);
    // The peak falls by at least the state's saving less the transient allowance.
    EXPECT_GE(none.peak - zero2.peak, saved2 - transient2);
    EXPECT_GE(none.peak - zero3.peak, saved3 - transient3);
    EXPECT_LT(zero3.peak, zero2.peak);
  }
  world.barrier();
}

}  // namespace
}  // namespace ptdp
