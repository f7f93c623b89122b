// The projection: cost accounting, the memory model against Korthikanti et al.
// 2022's formulas, communication formulas, the GEMM curve, calibration and
// the does-not-fit flag.
#include <gtest/gtest.h>

#include <cmath>

#include "core/accounting/memory_model.h"
#include "core/schedule/registry.h"
#include "core/sim/calibration.h"
#include "core/sim/cost_model.h"
#include "core/sim/projector.h"

namespace ptdp {
namespace {

Config gpt(int layers, int hidden, int heads) {
  Config c;
  c.model = {layers, hidden, heads, 2048, 51200, 0, 0.1};
  c.plan.precision = Precision::fp16;
  c.plan.recompute = Recompute::full;
  c.machine = load_machine("a100-80gb", default_machines_dir());
  return c;
}

TEST(Projection, SingleRankTimeIsTheSumOfItsCosts) {
  Config c = gpt(4, 2048, 16);
  c.plan.global_batch = 8;
  c.plan.micro_batch = 2;
  const CostModel costs(c, nullptr);
  const Projection p = project(c, nullptr);
  const double expect = 4 * (costs.forward(0, 0).total() + costs.backward(0, 0).total()) + costs.dp_reduce(0) +
                        costs.optimizer(0);
  EXPECT_NEAR(p.iteration_s, expect, 1e-12 * expect);
  EXPECT_NEAR(p.breakdown.bubble, 0.0, 1e-9);
  EXPECT_DOUBLE_EQ(costs.dp_reduce(0), 0.0);  // d = 1
}

TEST(Projection, BreakdownAddsUpToTheIterationOnEveryStage) {
  Config c = gpt(8, 2048, 16);
  c.plan.tp = 2, c.plan.pp = 4, c.plan.dp = 2, c.plan.global_batch = 32;
  const Projection p = project(c, nullptr);
  const Breakdown& b = p.breakdown;
  EXPECT_NEAR(b.compute + b.tp_comm + b.pp_comm + b.dp_comm + b.optimizer + b.bubble, p.iteration_s, 1e-9);
  EXPECT_GT(b.tp_comm, 0);
  EXPECT_GT(b.pp_comm, 0);
  EXPECT_GT(b.dp_comm, 0);
  EXPECT_GT(b.bubble, 0);
}

// Korthikanti's formula on the A100 profile (16-bit, dropout on), as a projection counts.
ActivationBytes korthikanti(const Config& c, const Plan& p) {
  return activation_bytes(c.model, p, RankDims(c.model, p), memory_traits(c.machine, p), ActivationFormula::korthikanti);
}
MemoryBreakdown projected_memory(const Config& c, int pp_rank, const Program& program) {
  return memory_model(c.model, c.plan, RankDims(c.model, c.plan), memory_traits(c.machine, c.plan),
                      ActivationFormula::korthikanti, pp_rank, program);
}

// Korthikanti et al. 2022, Table 2, per layer with s, b, h, a, t (16-bit, dropout on).
double layer_bytes(const Config& c, const Plan& p) { return static_cast<double>(korthikanti(c, p).layer); }

TEST(ProjectedMemory, LayerActivationsFollowKorthikanti) {
  Config c = gpt(1, 12288, 96);
  Plan& p = c.plan;
  const double s = 2048, b = 1, h = 12288, a = 96, sbh = s * b * h;
  p.recompute = Recompute::none;
  EXPECT_NEAR(layer_bytes(c, p), sbh * (34 + 5 * a * s / h), 1.0);
  p.tp = 8;
  EXPECT_NEAR(layer_bytes(c, p), sbh * (10 + 24.0 / 8 + 5 * a * s / (h * 8)), 1.0);
  p.sequence_parallel = true;
  EXPECT_NEAR(layer_bytes(c, p), sbh / 8 * (34 + 5 * a * s / h), 1.0);
  p.recompute = Recompute::selective;
  EXPECT_NEAR(layer_bytes(c, p), sbh / 8 * 34, 1.0);
  p.sequence_parallel = false;
  EXPECT_NEAR(layer_bytes(c, p), sbh * (10 + 24.0 / 8), 1.0);
  p.recompute = Recompute::full;
  EXPECT_NEAR(layer_bytes(c, p), 2 * sbh, 1.0);
}

TEST(ProjectedMemory, EighteenBytesAParameterOrSixPlusSixteenOverD) {
  Config c = gpt(8, 4096, 32);
  c.plan.dp = 4;
  const Program prog = build_program("1f1b", {1, 4, 1, 0});
  const auto m = projected_memory(c, 0, prog);
  const double params = static_cast<double>(rank_parameter_count(c.model, c.plan, RankDims(c.model, c.plan), 0));
  EXPECT_DOUBLE_EQ(static_cast<double>(m.params + m.grads + m.optimizer), 18 * params);
  c.plan.dp_sharding = DpSharding::optimizer;
  const auto sharded = projected_memory(c, 0, prog);
  // Megatron's 6 + 12/d, and ptdp's owned fp32 gradient shard, the reduce-scatter's target: 4/d.
  EXPECT_DOUBLE_EQ(static_cast<double>(sharded.params + sharded.grads + sharded.optimizer), (6 + 16.0 / 4) * params);
}

TEST(ProjectedMemory, InFlightMicroBatchesFollowTheSchedule) {
  Config c = gpt(16, 4096, 32);
  c.plan.pp = 4, c.plan.global_batch = 16;
  const double per_mb = 4 * layer_bytes(c, c.plan);
  const double transient = layer_bytes(c, [&] {
    Plan none = c.plan;
    none.recompute = Recompute::none;
    return none;
  }());
  const auto gpipe = projected_memory(c, 1, build_program("gpipe", {4, 16, 1, 1}));
  const auto one = projected_memory(c, 1, build_program("1f1b", {4, 16, 1, 1}));
  EXPECT_NEAR(static_cast<double>(gpipe.activations), 16 * per_mb + transient, 2.0);  // all m
  EXPECT_NEAR(static_cast<double>(one.activations), 3 * per_mb + transient, 2.0);     // p − r = 3
}

TEST(ProjectedMemory, TheActivationFormulaIsAParameter) {
  Config c = gpt(8, 4096, 32);
  c.plan.pp = 2, c.plan.global_batch = 8;
  const Projection paper = project(c, nullptr);
  const Projection own = project(c, nullptr, ActivationFormula::ptdp);
  EXPECT_EQ(paper.memory_formula, ActivationFormula::korthikanti);
  EXPECT_EQ(own.memory_formula, ActivationFormula::ptdp);
  const Program last = build_program("1f1b", {2, 8, 1, 1});
  EXPECT_EQ(paper.memory[1].total(), projected_memory(c, 1, last).total());
  const auto ptdp = memory_model(c.model, c.plan, RankDims(c.model, c.plan), memory_traits(c.machine, c.plan),
                                 ActivationFormula::ptdp, 1, last);
  EXPECT_EQ(own.memory[1].total(), ptdp.total());
  EXPECT_EQ(own.memory[1].params + own.memory[1].optimizer, paper.memory[1].params + paper.memory[1].optimizer);
  EXPECT_NE(own.memory[1].activations, paper.memory[1].activations);
}

TEST(Projection, APlanThatCannotFitIsFlagged) {
  // Figure 17's 145B model without recompute at micro-batch 4: 16 in flight on stage 0.
  Config c = gpt(80, 12288, 96);
  c.plan.tp = 8, c.plan.pp = 16, c.plan.micro_batch = 4, c.plan.global_batch = 64;
  c.plan.recompute = Recompute::none;
  const Projection p = project(c, nullptr);
  EXPECT_FALSE(p.fits);
  EXPECT_GT(p.peak_bytes, c.machine.memory_bytes);
  const auto r = to_json(projected_result(c, p, nullptr));
  EXPECT_EQ(r["metrics"]["memory_bytes"]["fits"], false);
  EXPECT_GT(r["does_not_fit"]["peak_bytes"].get<double>(), r["does_not_fit"]["available_bytes"].get<double>());
  c.plan.recompute = Recompute::full;
  EXPECT_TRUE(project(c, nullptr).fits);
}

TEST(CommModel, RingFactorsAndPlacement) {
  const Machine m = load_machine("a100-80gb", default_machines_dir());
  const CommModel comm(m, nullptr);
  const double bytes = 1e9, nvlink = m.intra_node.bandwidth_gbs * 1e9 * m.efficiency.intra_node;
  const double nic = m.inter_node.bandwidth_gbs * 1e9 * m.efficiency.inter_node;
  const double intra_step = m.intra_node.latency_us * 1e-6, inter_step = m.inter_node.latency_us * 1e-6;
  EXPECT_NEAR(comm.all_reduce(bytes, {8, 8}), 14 * intra_step + 2 * 7.0 / 8 * bytes / nvlink, 1e-9);
  EXPECT_NEAR(comm.all_gather(bytes, {8, 8}), 7 * intra_step + 7.0 / 8 * bytes / nvlink, 1e-9);
  // One member a node (8 adapters, 8 GPUs): each group has one adapter's worth of bandwidth.
  EXPECT_NEAR(comm.all_reduce(bytes, {4, 1}), 6 * inter_step + 2 * 3.0 / 4 * bytes / nic, 1e-9);
  // Eight members a node share all eight adapters: eight times faster across nodes.
  EXPECT_NEAR(comm.busbw({32, 8}, Collective::all_reduce), std::min(nvlink, 8 * nic), 1.0);
  EXPECT_DOUBLE_EQ(comm.all_reduce(bytes, {1, 1}), 0.0);
  EXPECT_LT(comm.p2p(bytes, true, 8), comm.p2p(bytes, false, 8));
  EXPECT_EQ(dp_placement(8, 4, 8).per_node, 1);
  EXPECT_EQ(dp_placement(2, 32, 8).per_node, 4);
  EXPECT_EQ(tp_placement(16, 8).per_node, 8);
}

TEST(DeviceRates, SmallGemmsRunFarBelowPeak) {
  const Machine m = load_machine("a100-80gb", default_machines_dir());
  const DeviceRates dev(m, Precision::bf16, nullptr);
  const double big = dev.analytical_gemm_efficiency({8192, 8192, 8192});
  // 64·32 = 2048 tiles of 128×256 run in 19 waves of 108 SMs.
  EXPECT_NEAR(big, m.efficiency.gemm * (2048.0 / (19 * 108)) * 8192 / (8192 + m.efficiency.gemm_k_half), 1e-12);
  EXPECT_LT(dev.analytical_gemm_efficiency({256, 256, 8192}), 0.2 * big);  // 2 tiles on 108 SMs
  EXPECT_LT(dev.analytical_gemm_efficiency({8192, 8192, 64}), 0.6 * big);  // short reduction
  // A GEMM with a tiny k is bound by its bytes, not its FLOPs.
  const GemmShape thin{16384, 16384, 8};
  EXPECT_NEAR(dev.gemm_seconds(thin), thin.m * thin.n * 2 / dev.bandwidth() + dev.launch_seconds(), 1e-6);
}

TEST(Calibration, ASlowerGemmTableGivesASlowerProjection) {
  Config c = gpt(8, 4096, 32);
  c.plan.global_batch = 8;
  const DeviceRates dev(c.machine, c.plan.precision, nullptr);
  Calibration slow;
  slow.name = "slow";
  slow.machine = c.machine.name;
  const GemmShape g{2048, 3 * 4096, 4096};
  slow.gemms.push_back({g, 2 * dev.analytical_gemm_seconds(g)});  // measured at half the modelled speed
  const Calibration again = Calibration::from_json(slow.to_json(), "round trip");
  ASSERT_EQ(again.gemms.size(), 1u);
  const double base = project(c, nullptr).iteration_s, slower = project(c, &again).iteration_s;
  EXPECT_GT(slower, 1.3 * base);
  const auto r = to_json(projected_result(c, project(c, &again), &again));
  EXPECT_EQ(r["projection"]["calibration"], "slow");
  EXPECT_THROW(Calibration::from_json({{"schema", "nope"}}, "x"), std::runtime_error);
  EXPECT_THROW(Calibration::from_json({{"schema", kCalibrationSchema}, {"gemms", {{{"m", 1}}}}}, "x"),
               std::runtime_error);
}

}  // namespace
}  // namespace ptdp
