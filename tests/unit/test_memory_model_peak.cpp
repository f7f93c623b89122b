// The memory model with ptdp's formula against the allocator's measured peak:
// a tiny GPT trains two iterations on the CPU in several layouts (ranks as
// threads over the in-process communicator), and on every rank the model's
// total must lie below the measured peak by no more than the workspace W.
//
// Why this margin: the model counts what lives across instructions
// (parameters, gradients, Adam state, the activations each in-flight
// micro-batch keeps), all of which the allocator also holds at its peak, so
// the model must not exceed the peak. The peak also holds what lives only
// inside one pass, which the model leaves out. A layer's backward holds at once
// the incoming gradient dy, dx2, dattn (h/t), dqkv (3h/t), dln1 and dx:
// n·(4h + 4h/t) elements (before them dy, dfc1 (f/t), dln2, dx2: fewer at f = 4h).
// The output layer's holds dlogits (n, V'/t) beside dlnf and dx: n·(V'/t + 2h).
// Beside either, the (b, s, h) transfers of one schedule step (a send and a
// receive), and the (b, s) int32 tokens and targets of the iteration's m
// micro-batches, which the executor keeps until the iteration ends. So
//   W = n·e·(max(4h + 4h/t, V'/t + 2h) + 2h) + m·2·n·4 bytes,
// 10·n·h·e at t = 1 for the model here. Measured gaps: 3–9 n·h·e; dropping a
// per-layer tensor of (b, s, h) or more from the formula puts a stage past W.
//
// Sequence parallelism's saving, measured: the same t = 2, p = 2 1F1B layout
// trained with and without it. Splitting the token rows divides every
// replicated per-layer activation (x, ln1, x2, ln2: 4·(b, s, h) per layer and
// in-flight micro-batch) by t, so stage 0's measured peak must drop by the
// model's difference up to one (b, s, h) tensor: the peak also holds one pass's
// gathers and transfers, which the model leaves out (measured: saving 249856
// bytes, model 266240, a gap of n·h/2 elements). Keeping one layernorm output
// of each layer full instead of local rows takes 2 layers × 2 micro-batches ×
// n·h/2 off the saving.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "core/accounting/memory_model.h"
#include "core/comm/in_process_communicator.h"
#include "core/config/rank_dims.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/optim/sharded_parts.h"
#include "tests/equivalence_config.h"
#include "tests/pipeline_pair_util.h"

namespace ptdp {
namespace {

constexpr double kTimeoutS = 60;

struct Layout {
  const char* name;
  int t, p, v;
  const char* schedule;
  Recompute recompute;
  int dp = 1;
  bool distributed_optimizer = false;
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;
  DpSharding sharding = DpSharding::none;  // beyond the distributed optimizer: ZeRO-2/3
};

void PrintTo(const Layout& l, std::ostream* os) { *os << l.name; }

// The workspace W (see the top) for cfg, in fp32 (e = 4). Under ZeRO-2/3 a
// backward also holds, inside its pass, the gradient reduce-scatters still in
// flight (ShardedParts::kFlushesInFlight, each a (c) and a (c/d) fp32 buffer of
// a unit) beside its own unit's (c) buffer, of which the model counts one unit;
// so W grows by kFlushesInFlight·(u + u/d)·4 bytes, u the largest unit.
std::int64_t workspace_bytes(const Config& cfg) {
  const RankDims r(cfg.model, cfg.plan);
  const std::int64_t widest = std::max(4 * r.h + 4 * r.h / r.t, r.vt + 2 * r.h);
  std::int64_t w = r.n * 4 * (widest + 2 * r.h) + cfg.plan.micro_batches() * 2 * r.n * 4;
  if (cfg.plan.shards_gradients()) {
    std::int64_t u = 0;
    for (int s = 0; s < cfg.plan.pp; ++s) u = std::max(u, shard_unit_parameter_count(cfg.model, cfg.plan, r, s));
    w += static_cast<std::int64_t>(ShardedParts::kFlushesInFlight) * (u + u / cfg.plan.dp) * 4;
  }
  return w;
}

// The equivalence GPT with longer sequences and micro-batches of 2, so that
// activations are a good part of the memory (n = 128 tokens a micro-batch).
Config layout_config(const Layout& l) {
  Config c = test::equivalence_config();
  c.model.seq_len = 64;
  c.plan.micro_batch = 2;
  c.plan.global_batch = 8;
  c.plan.tp = l.t, c.plan.pp = l.p, c.plan.virtual_stages = l.v;
  c.plan.schedule = l.schedule;
  c.plan.recompute = l.recompute;
  c.plan.dp = l.dp;
  c.plan.dp_sharding = l.distributed_optimizer ? DpSharding::optimizer : l.sharding;
  c.plan.sequence_parallel = l.sequence_parallel;
  c.plan.tp_comm_overlap = l.tp_comm_overlap;
  return c;
}

struct RankMemory {
  std::int64_t measured = 0;  // the allocator's peak over the second iteration
  std::int64_t model = 0;     // memory_model(…, ptdp, …).total()
  std::int64_t state_measured = 0;  // the optimizer's moments and masters (AdamW::state_bytes)
  std::int64_t state_model = 0;     // memory_model(…).optimizer
  std::int64_t grads_model = 0;     // memory_model(…).grads
};

std::vector<RankMemory> train_and_measure(const Config& cfg) {
  const Topology topo = test::plan_topology(cfg);
  auto world = make_in_process_world(topo.world(), kTimeoutS);
  std::vector<RankMemory> out(static_cast<std::size_t>(topo.world()));
  test::run_rank_threads(world, [&](int r, Communicator& comm) {
    CpuAllocator alloc(r);
    CpuOps ops(alloc);
    ProcessGroups groups = make_process_groups(comm, topo, cfg.plan.tp_comm_overlap);
    auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
    Trainer trainer(cfg, ops, groups, *data);
    // The peak of the second iteration: the first also holds what only start-up
    // makes (ZeRO-3 builds each weight whole before its first step keeps the
    // owned blocks), which the model of an iteration does not count.
    std::vector<double> losses{trainer.step(0).loss};
    alloc.reset_peak();
    losses.push_back(trainer.step(1).loss);
    const MemoryTraits tr = memory_traits(Device::cpu, cfg.plan.precision, false);
    RankMemory& m = out[static_cast<std::size_t>(r)];
    m.measured = alloc.stats().peak_bytes;
    const RankDims dims(cfg.model, cfg.plan);
    const MemoryBreakdown mb =
        memory_model(cfg.model, cfg.plan, dims, tr, ActivationFormula::ptdp, groups.coord.pp, trainer.program());
    m.model = mb.total();
    m.state_measured = trainer.optimizer().state_bytes();
    m.state_model = mb.optimizer;
    m.grads_model = mb.grads;
    return losses;
  });
  return out;
}

class MemoryModelPeak : public testing::TestWithParam<Layout> {};

TEST_P(MemoryModelPeak, ModelIsWithinTheMarginBelowTheMeasuredPeak) {
  const Config cfg = layout_config(GetParam());
  ASSERT_TRUE(validate(cfg, cfg.plan.world_size()).empty()) << validate(cfg, cfg.plan.world_size()).front().message;
  const std::vector<RankMemory> ranks = train_and_measure(cfg);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankMemory& m = ranks[r];
    const std::int64_t w = workspace_bytes(cfg);
    EXPECT_LE(m.model, m.measured) << "rank " << r << ": the model counts more than the allocator held (model "
                                   << m.model << ", measured " << m.measured << ")";
    EXPECT_LE(m.measured - m.model, w) << "rank " << r << ": the model misses more than the workspace (model "
                                       << m.model << ", measured " << m.measured << ")";
  }
}

TEST(SequenceParallelMemory, MeasuredSavingMatchesTheModel) {
  const Layout tp{"tp", 2, 2, 1, "1f1b", Recompute::none};
  Layout sp = tp;
  sp.sequence_parallel = true;
  const Config off = layout_config(tp), on = layout_config(sp);
  ASSERT_TRUE(validate(on, on.plan.world_size()).empty());
  const RankMemory a = train_and_measure(off).front(), b = train_and_measure(on).front();  // stage 0, tensor rank 0
  const std::int64_t model_saving = a.model - b.model, measured_saving = a.measured - b.measured;
  ASSERT_GT(model_saving, 0);
  const RankDims r(on.model, on.plan);
  EXPECT_LE(std::abs(measured_saving - model_saving), r.n * r.h * 4)  // one (b, s, h) fp32 tensor
      << "measured saving " << measured_saving << " bytes, model saving " << model_saving;
}

// The distributed optimizer keeps 1/d of the Adam state: on every rank the
// measured state falls from the replicated run's by the model's factor, up to
// the buffer's padding (fewer than d elements of 8 bytes of moments).
TEST(MemoryModelPeak, DistributedOptimizerStateFallsByTheModelsFactor) {
  const Layout whole{"replicated", 1, 2, 1, "1f1b", Recompute::none, 2, false};
  Layout sharded = whole;
  sharded.distributed_optimizer = true;
  const std::vector<RankMemory> a = train_and_measure(layout_config(whole));
  const std::vector<RankMemory> b = train_and_measure(layout_config(sharded));
  for (std::size_t r = 0; r < a.size(); ++r) {
    ASSERT_GT(b[r].state_model, 0);
    const double factor = static_cast<double>(a[r].state_model) / static_cast<double>(b[r].state_model);
    EXPECT_NEAR(static_cast<double>(a[r].state_measured) / factor, static_cast<double>(b[r].state_measured), 8.0 * 2)
        << "rank " << r << ": replicated state " << a[r].state_measured << " bytes, model factor " << factor;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, MemoryModelPeak,
    testing::Values(Layout{"single_rank", 1, 1, 1, "1f1b", Recompute::none},
                    Layout{"pipeline_1f1b", 1, 2, 1, "1f1b", Recompute::none},
                    Layout{"interleaved_v2", 1, 2, 2, "interleaved", Recompute::none},
                    Layout{"tensor_parallel", 2, 1, 1, "1f1b", Recompute::none},
                    Layout{"sequence_parallel", 2, 2, 1, "1f1b", Recompute::none, 1, false, true},
                    Layout{"sequence_parallel_tp_overlap", 2, 2, 1, "1f1b", Recompute::none, 1, false, true, true},
                    Layout{"zero_bubble_sequence_parallel", 2, 2, 1, "zb-h1", Recompute::none, 1, false, true},
                    Layout{"recompute_full", 1, 2, 1, "1f1b", Recompute::full},
                    Layout{"recompute_selective", 1, 1, 1, "1f1b", Recompute::selective},
                    Layout{"zero_bubble", 1, 2, 1, "zb-h1", Recompute::none},
                    Layout{"zero_bubble_recompute_full", 1, 2, 1, "zb-h1", Recompute::full},
                    // rank 0 keeps 2p−1 = 3 of the m = 4 micro-batches in flight
                    Layout{"zero_bubble_h2", 1, 2, 1, "zb-h2", Recompute::none},
                    Layout{"distributed_optimizer_d2", 1, 2, 1, "1f1b", Recompute::none, 2, true},
                    Layout{"zero2_d2", 1, 2, 1, "1f1b", Recompute::none, 2, false, false, false, DpSharding::gradients},
                    Layout{"zero3_d2", 1, 2, 1, "1f1b", Recompute::none, 2, false, false, false, DpSharding::parameters}),
    [](const testing::TestParamInfo<Layout>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace ptdp
