// ZeRO-2/3 in the memory model and the simulator (plan.dp_sharding gradients
// and parameters), and the does_not_fit margin with its smallest fitting change.
// Expectations computed by hand from the formulas in memory_model.h and
// sharded_comm.h.
#include <gtest/gtest.h>

#include "core/accounting/memory_model.h"
#include "core/config/chunk_layout.h"
#include "core/schedule/registry.h"
#include "core/sim/cost_model.h"
#include "core/sim/fit_margin.h"
#include "core/sim/projector.h"
#include "core/sim/sharded_comm.h"
#include "core/topology/topology.h"

namespace ptdp {
namespace {

Config zero_gpt(int layers, int hidden, int heads) {
  Config c;
  c.model = {layers, hidden, heads, 2048, 51200, 0, 0.1};
  c.plan.precision = Precision::bf16;
  c.machine = load_machine("h100-80gb", default_machines_dir());
  return c;
}

Plan with_sharding(Plan p, DpSharding s) {
  p.dp_sharding = s;
  return p;
}

// 16-bit weights (e = 2) with masters: N = 1000 parameters, d = 4, unit u = 100.
TEST(DpShardingMemory, StateBytesByStage) {
  MemoryTraits tr;
  tr.weight_bytes = 2, tr.master_weights = true;
  Plan p;
  p.dp = 4;
  const StateBytes none = state_bytes(with_sharding(p, DpSharding::none), tr, 1000, 100);
  EXPECT_EQ(none.params, 2000);
  EXPECT_EQ(none.grads, 4000);
  EXPECT_EQ(none.optimizer, 12000);
  const StateBytes z1 = state_bytes(with_sharding(p, DpSharding::optimizer), tr, 1000, 100);
  EXPECT_EQ(z1.params, 2000);
  EXPECT_EQ(z1.grads, 4000 + 1000);  // the full buffer and the owned N/d
  EXPECT_EQ(z1.optimizer, 3000);
  const StateBytes z2 = state_bytes(with_sharding(p, DpSharding::gradients), tr, 1000, 100);
  EXPECT_EQ(z2.params, 2000);
  EXPECT_EQ(z2.grads, 250 * 4 + 100 * 2);  // owned fp32 shard and one unit's 16-bit gradient
  EXPECT_EQ(z2.optimizer, 3000);
  const StateBytes z3 = state_bytes(with_sharding(p, DpSharding::parameters), tr, 1000, 100);
  EXPECT_EQ(z3.params, (250 + 2 * 100) * 2);  // owned, the unit in use and the prefetched one
  EXPECT_EQ(z3.grads, 250 * 4 + 100 * 2);
  EXPECT_EQ(z3.optimizer, 3000);
  // 16-bit main gradients (grad_precision compute, bf16): every gradient byte count halves.
  Plan g16 = with_sharding(p, DpSharding::optimizer);
  g16.grad_precision = GradPrecision::compute;
  EXPECT_EQ(state_bytes(g16, tr, 1000, 100).grads, 2000 + 500);
  g16.dp_sharding = DpSharding::gradients;
  EXPECT_EQ(state_bytes(g16, tr, 1000, 100).grads, 250 * 2 + 100 * 2);
  // d = 1: sharding holds no more than the whole.
  p.dp = 1;
  EXPECT_EQ(state_bytes(with_sharding(p, DpSharding::parameters), tr, 1000, 600).params, 2000);
  EXPECT_EQ(state_bytes(with_sharding(p, DpSharding::gradients), tr, 1000, 600).grads, 4000);
}

TEST(DpShardingMemory, ModelUsesTheLayerAsUnitAndKeepsActivations) {
  Config c = zero_gpt(32, 1024, 16);
  c.plan.pp = 2, c.plan.dp = 8, c.plan.global_batch = 16, c.plan.dp_sharding = DpSharding::optimizer;
  const RankDims r(c.model, c.plan);
  const auto programs = build_pipeline(c.plan.schedule, c.plan.pp, c.plan.micro_batches(), 1);
  const MemoryTraits tr = memory_traits(c.machine, c.plan);
  const auto at = [&](DpSharding s) {
    return memory_model(c.model, with_sharding(c.plan, s), r, tr, ActivationFormula::korthikanti, 1, programs[1]);
  };
  const MemoryBreakdown z1 = at(DpSharding::optimizer), z2 = at(DpSharding::gradients), z3 = at(DpSharding::parameters);
  const std::int64_t n = rank_parameter_count(c.model, c.plan, r, 1);
  // Stage 1 holds 16 layers and the head (tied: a copy of the word embedding (V', h), larger than a layer).
  const std::int64_t unit = chunk_parameter_count(c.model, r, ChunkLayout{0, 0, 0, false, true});
  EXPECT_GT(unit, layer_shard_parameter_count(c.model, r));
  EXPECT_EQ(shard_unit_parameter_count(c.model, c.plan, r, 1), unit);
  EXPECT_EQ(z2.grads, (n + 7) / 8 * 4 + unit * 2);
  EXPECT_EQ(z3.params, ((n + 7) / 8 + 2 * unit) * 2);
  EXPECT_EQ(z2.params, z1.params);
  EXPECT_EQ(z2.optimizer, z1.optimizer);
  EXPECT_EQ(z3.activations, z1.activations);
  EXPECT_LT(z3.total(), z2.total());
  EXPECT_LT(z2.total(), z1.total());
}

// The traffic of one chunk: a layer per unit, all-gathers of 16-bit weights
// (parameters) and reduce-scatters of 16-bit gradients (gradients and parameters).
TEST(DpShardingSim, TrafficIsEachUnitsCollective) {
  Config c = zero_gpt(4, 1024, 16);
  c.plan.dp = 16, c.plan.global_batch = 32, c.plan.dp_sharding = DpSharding::parameters;
  const RankDims r(c.model, c.plan);
  const CommModel comm(c.machine, nullptr);
  const Placement dp = dp_placement(1, 16, 8);
  const ChunkLayout two_layers{0, 0, 2, false, false};
  const ShardedTraffic t = sharded_traffic(c, r, two_layers, comm, dp);
  const double layer = static_cast<double>(layer_shard_parameter_count(c.model, r));
  EXPECT_DOUBLE_EQ(t.gather_s, 2 * comm.all_gather(layer * 2, dp));
  EXPECT_DOUBLE_EQ(t.reduce_scatter_s, 2 * comm.reduce_scatter(layer * 2, dp));
  c.plan.dp_sharding = DpSharding::gradients;
  const ShardedTraffic z2 = sharded_traffic(c, r, two_layers, comm, dp);
  EXPECT_DOUBLE_EQ(z2.gather_s, 0.0);
  EXPECT_DOUBLE_EQ(z2.reduce_scatter_s, t.reduce_scatter_s);
  c.plan.dp_sharding = DpSharding::optimizer;
  EXPECT_DOUBLE_EQ(sharded_traffic(c, r, two_layers, comm, dp).reduce_scatter_s, 0.0);
  EXPECT_DOUBLE_EQ(exposed_s(3.0, 2.0), 1.0);
  EXPECT_DOUBLE_EQ(exposed_s(1.0, 2.0), 0.0);
}

// 4 layers of h 4096 over d = 64 with the distributed optimizer, the gradient
// reduction all at the step (no overlap): what the step-cost tests vary.
Config step_reduced_gpt() {
  Config c = zero_gpt(4, 4096, 32);
  c.plan.dp = 64, c.plan.global_batch = 128, c.plan.dp_sharding = DpSharding::optimizer;
  c.plan.overlap_grad_reduce = false;
  return c;
}

// The cost model adds to each pass what its compute does not hide, and ZeRO-2/3
// take the gradient reduction out of reduce_grads (done per micro-batch).
TEST(DpShardingSim, PassesCarryTheExposedPartAndTheStepLosesTheReduction) {
  Config c = step_reduced_gpt();
  const CostModel z1(c, nullptr);
  c.plan.dp_sharding = DpSharding::parameters;
  const CostModel z3(c, nullptr);
  const Topology topo{1, 1, 64, 8};
  const CommModel comm(c.machine, nullptr);
  const ShardedTraffic t = sharded_traffic(c, z3.dims(), chunk_layout(c.model, c.plan, 0, 0), comm,
                                           group_placement(topo, topo.dp_group(0)));
  ASSERT_GT(t.gather_s, 0);
  const PassCost f1 = z1.forward(0, 0), b1 = z1.backward(0, 0);
  EXPECT_DOUBLE_EQ(f1.dp_comm, 0.0);
  EXPECT_DOUBLE_EQ(z3.forward(0, 0).dp_comm, exposed_s(t.gather_s, f1.total()));
  EXPECT_DOUBLE_EQ(z3.backward(0, 0).dp_comm, exposed_s(t.gather_s + t.reduce_scatter_s, b1.total()));
  EXPECT_DOUBLE_EQ(z3.forward(0, 0).compute(), f1.compute());
  // The step: ZeRO-3 waits for the last unit's reduce-scatter alone (the
  // largest unit's), ZeRO-2 also for the updated weights' gather.
  const double unit = static_cast<double>(shard_unit_parameter_count(c.model, c.plan, z3.dims(), 0));
  const double last = comm.reduce_scatter(unit * 2, group_placement(topo, topo.dp_group(0)));
  EXPECT_GT(z1.dp_reduce(0), last);
  EXPECT_DOUBLE_EQ(z3.dp_reduce(0), last);
  EXPECT_DOUBLE_EQ(z3.param_gather(0), 0.0);
  c.plan.dp_sharding = DpSharding::gradients;
  const CostModel z2(c, nullptr);
  EXPECT_DOUBLE_EQ(z2.dp_reduce(0), last + z1.param_gather(0));
}

// 16-bit main gradients (grad_precision compute) halve the distributed
// optimizer's gradient reduce-scatter at the step, not its gather of the
// updated fp32 weights.
TEST(DpShardingSim, SixteenBitGradientsHalveTheStepsReductionNotItsGather) {
  Config c = step_reduced_gpt();
  const CostModel fp32(c, nullptr);
  c.plan.grad_precision = GradPrecision::compute;
  const CostModel g16(c, nullptr);
  const double params = static_cast<double>(rank_parameter_count(c.model, c.plan, g16.dims(), 0));
  const Topology topo{1, 1, 64, 8};
  const CommModel comm(c.machine, nullptr);
  const Placement dp = group_placement(topo, topo.dp_group(0));
  EXPECT_DOUBLE_EQ(g16.param_gather(0), fp32.param_gather(0));
  EXPECT_DOUBLE_EQ(fp32.dp_reduce(0) - fp32.param_gather(0), comm.reduce_scatter(params * 4, dp));
  EXPECT_DOUBLE_EQ(g16.dp_reduce(0) - g16.param_gather(0), comm.reduce_scatter(params * 2, dp));
}

// A plan whose traffic exceeds its compute: the exposed part shows in the time and the breakdown.
TEST(DpShardingSim, ExposedTrafficLengthensTheIteration) {
  Config c = zero_gpt(4, 4096, 32);
  c.model.seq_len = 128;  // little compute a pass
  c.plan.dp = 64, c.plan.global_batch = 128, c.plan.dp_sharding = DpSharding::optimizer;
  const Projection z1 = project(c, nullptr);
  c.plan.dp_sharding = DpSharding::parameters;
  const CostModel costs(c, nullptr);
  ASSERT_GT(costs.forward(0, 0).dp_comm, 0.0);
  const Projection z3 = project(c, nullptr);
  EXPECT_GT(z3.iteration_s, z1.iteration_s);
  const Breakdown& b = z3.breakdown;
  EXPECT_NEAR(b.compute + b.tp_comm + b.pp_comm + b.dp_comm + b.optimizer + b.bubble, z3.iteration_s, 1e-9);
  const double m = c.plan.micro_batches();  // p = 1: every pass's exposure, m times, and the step's wait
  EXPECT_NEAR(b.dp_comm, m * (costs.forward(0, 0).dp_comm + costs.backward(0, 0).dp_comm) + costs.dp_reduce(0),
              1e-9 * z3.iteration_s);
}

// The margin: the most loaded rank's components and the profile's workspace against the device.
TEST(DoesNotFitMargin, ComponentsAddUpToWhatIsNeeded) {
  Config c = zero_gpt(24, 8192, 64);
  c.plan.tp = 1, c.plan.dp = 64, c.plan.global_batch = 64, c.plan.recompute = Recompute::none;
  const Projection proj = project(c, nullptr);
  ASSERT_FALSE(proj.fits);
  const FitMargin m = fit_margin(c, proj);
  EXPECT_EQ(m.needed.total(), proj.peak_bytes);
  EXPECT_EQ(m.workspace, c.machine.memory_reserved_bytes);
  EXPECT_EQ(m.available, c.machine.memory_bytes);
  EXPECT_EQ(m.over(), proj.peak_bytes + c.machine.memory_reserved_bytes - c.machine.memory_bytes);
  const nlohmann::json j = to_json(m, std::nullopt);
  const nlohmann::json& by = j["by_component"];
  EXPECT_EQ(by["weights"].get<std::int64_t>() + by["gradients"].get<std::int64_t>() +
                by["optimizer"].get<std::int64_t>() + by["activations"].get<std::int64_t>() +
                by["workspace"].get<std::int64_t>(),
            j["needed_bytes"].get<std::int64_t>());
  EXPECT_TRUE(j["fits_with"].is_null());
  EXPECT_NE(margin_text(m, std::nullopt).find("GiB over"), std::string::npos);
}

// The smallest change: one field where one suffices, the fastest of those that fit.
TEST(DoesNotFitMargin, SmallestChangeThatFits) {
  Config c = zero_gpt(24, 8192, 64);
  c.plan.tp = 1, c.plan.dp = 64, c.plan.global_batch = 64, c.plan.recompute = Recompute::none;
  const std::optional<FitChange> change = smallest_fitting_change(c, nullptr);
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->fields.size(), 1u) << change->fields.dump();
  EXPECT_TRUE(change->projection.fits);
  // Each other single change either does not fit or is no faster.
  for (const Recompute r : {Recompute::selective, Recompute::full}) {
    Config o = c;
    o.plan.recompute = r;
    const Projection p = project(o, nullptr);
    if (p.fits) {
      EXPECT_LE(change->projection.iteration_s, p.iteration_s);
    }
  }
  const std::string text = margin_text(fit_margin(c, project(c, nullptr)), change);
  EXPECT_NE(text.find("fits with " + change->fields.begin().key()), std::string::npos) << text;
  // Nothing fits a device far too small: no change.
  Config tiny = c;
  tiny.machine.memory_bytes = tiny.machine.memory_reserved_bytes + 1024;
  EXPECT_FALSE(smallest_fitting_change(tiny, nullptr).has_value());
}

}  // namespace
}  // namespace ptdp
