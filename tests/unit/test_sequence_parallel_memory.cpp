// Sequence parallelism's saving, measured: the same tensor-parallel layout
// (t = 2, p = 2, 1F1B) trained with and without sequence_parallel. Splitting
// the token rows divides every replicated per-layer activation (layer input,
// ln1, x2, ln2: 4·(b, s, h) per layer and in-flight micro-batch) by t, so the
// measured peak must drop, and by the memory model's difference up to one
// (b, s, h) tensor: the peak also holds one pass's gathers and transfers, which
// the model leaves out (measured here: saving 249856 bytes, model 266240, a gap
// of n·h/2 elements). Keeping one layernorm output of each layer full instead of
// local rows takes 2 layers × 2 micro-batches × n·h/2 off the saving.
#include <gtest/gtest.h>

#include <cmath>

#include "core/comm/in_process_communicator.h"
#include "core/config/rank_dims.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/metrics/memory_model.h"
#include "tests/equivalence_config.h"
#include "tests/pipeline_pair_util.h"

namespace ptdp {
namespace {

struct Peak {
  std::int64_t measured = 0;  // allocator peak of pipeline rank 0 (most micro-batches in flight)
  std::int64_t model = 0;     // memory_model(…, ptdp, …).total() of that rank
};

// The memory-peak GPT (n = 128 tokens a micro-batch) at t = 2, p = 2.
Config sp_config(bool sequence_parallel) {
  Config c = test::equivalence_config();
  c.model.seq_len = 64;
  c.plan.micro_batch = 2;
  c.plan.global_batch = 8;
  c.plan.tp = 2, c.plan.pp = 2;
  c.plan.sequence_parallel = sequence_parallel;
  return c;
}

Peak train_and_measure(const Config& cfg) {
  const Topology topo = test::plan_topology(cfg);
  auto world = make_in_process_world(topo.world(), 60);
  std::vector<Peak> out(static_cast<std::size_t>(topo.world()));
  test::run_rank_threads(world, [&](int r, Communicator& comm) {
    CpuAllocator alloc(r);
    CpuOps ops(alloc);
    ProcessGroups groups = make_process_groups(comm, topo);
    auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
    Trainer trainer(cfg, ops, groups, *data);
    std::vector<double> losses;
    for (int i = 0; i < 2; ++i) losses.push_back(trainer.step(i).loss);
    const MemoryTraits tr = memory_traits(Device::cpu, cfg.plan.precision, false);
    Peak& p = out[static_cast<std::size_t>(r)];
    p.measured = alloc.stats().peak_bytes;
    p.model = memory_model(cfg.model, cfg.plan, tr, ActivationFormula::ptdp, groups.coord.pp, trainer.program()).total();
    return losses;
  });
  return out.front();  // world rank 0: pipeline stage 0, tensor rank 0
}

TEST(SequenceParallelMemory, MeasuredSavingMatchesTheModel) {
  const Config off = sp_config(false), on = sp_config(true);
  ASSERT_TRUE(validate(on, on.plan.world_size()).empty());
  const Peak a = train_and_measure(off), b = train_and_measure(on);
  const std::int64_t model_saving = a.model - b.model, measured_saving = a.measured - b.measured;
  const RankDims r(on.model, on.plan);
  ASSERT_GT(model_saving, 0);
  EXPECT_GT(measured_saving, 0) << "peak with sequence parallelism " << b.measured << ", without " << a.measured;
  // One (b, s, h) fp32 tensor (see the top): 12% of the saving here.
  const std::int64_t tolerance = r.n * r.h * 4;
  EXPECT_LE(std::abs(measured_saving - model_saving), tolerance)
      << "measured saving " << measured_saving << " bytes, model saving " << model_saving;
}

}  // namespace
}  // namespace ptdp
