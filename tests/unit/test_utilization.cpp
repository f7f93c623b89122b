// MFU and HFU (core/accounting/flops.h utilization(), and the "mfu"/"hfu" fields
// of every result) against hand-computed values for the 1.7B GPT of Table 1.
#include <gtest/gtest.h>

#include <cmath>

#include "core/accounting/flops.h"
#include "core/accounting/throughput.h"
#include "core/config/config.h"
#include "core/results/result.h"
#include "core/sim/projector.h"

namespace ptdp {
namespace {

// Table 1's 1.7B GPT: l=24, h=2304, a=24, s=2048, V=51200 (named in a
// namespace of its own: one-letter names at file scope would shadow others).
namespace gpt_1_7b_sizes {
constexpr double l = 24, h = 2304, s = 2048, V = 51200;
}
Model gpt_1_7b() { return Model{24, 2304, 24, 2048, 51200, 0}; }

Plan one_gpu(int batch, Recompute r) {
  Plan p;
  p.micro_batch = batch;
  p.global_batch = batch;
  p.recompute = r;
  return p;
}

constexpr double kPeakTflops = 989;  // h100-80gb bf16 dense peak
constexpr double kIterationS = 2.5;

// FLOPs the GPU could do in one iteration at its peak: 1 GPU · 2.5 s · 989e12.
double peak_flops_per_iteration() { return 1 * kIterationS * kPeakTflops * 1e12; }

TEST(Utilization, MfuIsThe72FormOverThePeak) {
  using namespace gpt_1_7b_sizes;
  const double B = 8;
  const double by_hand = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)) / peak_flops_per_iteration();
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
    const Utilization u = utilization(gpt_1_7b(), one_gpu(8, r), kIterationS, kPeakTflops);
    // MFU does not depend on recompute: the model's FLOPs are the same however often work is redone.
    EXPECT_NEAR(u.mfu / by_hand, 1.0, 1e-12) << to_string(r);
  }
  // 72·8·2048·24·2304²·1.2252 = 1.840e14 FLOPs in 2.5 s on 989 TFLOP/s: 7.44%.
  EXPECT_NEAR(by_hand, 0.0744, 0.0005);
}

TEST(Utilization, HfuEqualsMfuWithoutRecompute) {
  const Utilization u = utilization(gpt_1_7b(), one_gpu(8, Recompute::none), kIterationS, kPeakTflops);
  EXPECT_DOUBLE_EQ(u.hfu, u.mfu);
}

TEST(Utilization, FullRecomputeHfuIsEq3AndItsRatioToMfu) {
  using namespace gpt_1_7b_sizes;
  const double B = 8;
  const Utilization u = utilization(gpt_1_7b(), one_gpu(8, Recompute::full), kIterationS, kPeakTflops);
  // Executed FLOPs under full recompute: each layer's forward, 24·B·s·h²·(1 + s/(6h)), runs
  // twice and its backward (twice the forward) once: 4 forwards per layer; the logits, 6·B·s·h·V,
  // are never recomputed. 4·l·24·B·s·h²·(1 + s/(6h)) + 6·B·s·h·V = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)),
  // which is eq. (3). Without recompute there are 3 forwards per layer:
  // 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)). So
  //   HFU/MFU = (96/72) · (1 + s/(6h) + V/(16lh)) / (1 + s/(6h) + V/(12lh))
  //           = 4/3 · (1 + 0.14815 + 0.05787) / (1 + 0.14815 + 0.07716) = 4/3 · 0.98425 = 1.3123.
  const double hfu_by_hand = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)) / peak_flops_per_iteration();
  EXPECT_NEAR(u.hfu / hfu_by_hand, 1.0, 1e-12);
  const double ratio = 4.0 / 3.0 * (1 + s / (6 * h) + V / (16 * l * h)) / (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(u.hfu / u.mfu, ratio, 1e-12);
  EXPECT_NEAR(u.hfu / u.mfu, 1.3123, 1e-4);
}

TEST(Utilization, SelectiveRecomputeAddsTheAttentionScoresOnly) {
  using namespace gpt_1_7b_sizes;
  const double B = 8;
  const Utilization u = utilization(gpt_1_7b(), one_gpu(8, Recompute::selective), kIterationS, kPeakTflops);
  // Selective recompute reruns Q·Kᵀ and scores·V of every layer: 2·(2·B·s²·h) = 4·B·s²·h FLOPs.
  EXPECT_NEAR(u.hfu - u.mfu, l * 4 * B * s * s * h / peak_flops_per_iteration(), 1e-15);
}

TEST(Utilization, ScalesWithGpusAndIsZeroWithoutAPeak) {
  Plan p = one_gpu(8, Recompute::none);
  const Utilization one = utilization(gpt_1_7b(), p, kIterationS, kPeakTflops);
  p.dp = 4, p.global_batch = 32;  // 4 replicas, 4x the batch, the same time: the same utilisation
  EXPECT_NEAR(utilization(gpt_1_7b(), p, kIterationS, kPeakTflops).mfu / one.mfu, 1.0, 1e-12);
  const Utilization none = utilization(gpt_1_7b(), p, kIterationS, 0);
  EXPECT_EQ(none.mfu, 0);
  EXPECT_EQ(none.hfu, 0);
  EXPECT_EQ(utilization(gpt_1_7b(), p, 0, kPeakTflops).mfu, 0);
}

TEST(Utilization, ResultFieldsNameThePeakAndAreNullWithoutOne) {
  Config cfg;
  cfg.model = gpt_1_7b();
  cfg.plan = one_gpu(8, Recompute::full);
  cfg.machine.peak_tflops["bf16"] = kPeakTflops;
  const auto j = throughput_metrics(cfg, kIterationS);
  const Utilization u = utilization(cfg.model, cfg.plan, kIterationS, kPeakTflops);
  EXPECT_DOUBLE_EQ(j["mfu"].get<double>(), u.mfu);
  EXPECT_DOUBLE_EQ(j["hfu"].get<double>(), u.hfu);
  EXPECT_DOUBLE_EQ(j["utilization"]["peak_tflops"].get<double>(), kPeakTflops);
  EXPECT_EQ(j["utilization"]["precision"], "bf16");
  // The paper's figure counts eq. (3) under full recompute: it equals HFU·peak, not MFU·peak.
  EXPECT_NEAR(j["model_tflops_per_gpu"].get<double>(), u.hfu * kPeakTflops, 1e-9);
  cfg.machine.peak_tflops.clear();
  const auto no_peak = throughput_metrics(cfg, kIterationS);
  EXPECT_TRUE(no_peak["mfu"].is_null());
  EXPECT_TRUE(no_peak["hfu"].is_null());
}

// throughput() is the one computation: the result's JSON and RunResult::throughput() carry its figures.
TEST(Utilization, TheResultReportsThroughputAsComputedOnce) {
  Config cfg;
  cfg.model = gpt_1_7b();
  cfg.plan = one_gpu(8, Recompute::full);
  cfg.machine.peak_tflops["bf16"] = kPeakTflops;
  RunResult r;
  r.config = cfg;
  r.iteration_s = {kIterationS, 2 * kIterationS, kIterationS};  // median kIterationS
  const Throughput t = r.throughput();
  const auto m = to_json(r)["metrics"];
  EXPECT_EQ(m["model_tflops_per_gpu"].get<double>(), t.model_tflops_per_gpu);
  EXPECT_EQ(m["hardware_tflops_per_gpu"].get<double>(), t.hardware_tflops_per_gpu);
  EXPECT_EQ(m["aggregate_pflops"].get<double>(), t.aggregate_pflops);
  EXPECT_EQ(m["tokens_per_s"].get<double>(), t.tokens_per_s);
  EXPECT_EQ(m["sequences_per_s"].get<double>(), t.sequences_per_s);
  EXPECT_EQ(m["percent_of_peak"].get<double>(), *t.percent_of_peak);
  EXPECT_EQ(m["mfu"].get<double>(), *t.mfu);
  EXPECT_EQ(m["hfu"].get<double>(), *t.hfu);
  EXPECT_EQ(m["flops_per_iteration"]["model"].get<double>(), t.model_flops);
  EXPECT_DOUBLE_EQ(t.tokens_per_s, 8 * 2048 / kIterationS);
  EXPECT_DOUBLE_EQ(t.percent_of_peak.value_or(0), 100 * t.model_tflops_per_gpu / kPeakTflops);
  const Throughput untimed = throughput(cfg, 0);  // a zero time: rates 0, utilisation unknown
  EXPECT_EQ(untimed.model_tflops_per_gpu, 0);
  EXPECT_EQ(untimed.tokens_per_s, 0);
  EXPECT_FALSE(untimed.mfu.has_value());
  EXPECT_EQ(untimed.percent_of_peak, 0.0);
}

TEST(Utilization, ProjectedResultOfTheCampaignConfigCarriesThem) {
  const Config cfg = load_config(std::string(PTDP_SOURCE_DIR) + "/endtoend/configs/gpt-1.7b-h100.json",
                                 default_machines_dir());
  const Projection proj = project(cfg, nullptr);
  const auto m = to_json(projected_result(cfg, proj, nullptr))["metrics"];
  const Utilization u =
      utilization(cfg.model, cfg.plan, proj.iteration_s, cfg.machine.peak_for(to_string(cfg.plan.precision)));
  EXPECT_GT(u.mfu, 0);
  EXPECT_LT(u.hfu, 1);  // a projection never beats the peak
  EXPECT_DOUBLE_EQ(m["mfu"].get<double>(), u.mfu);
  EXPECT_DOUBLE_EQ(m["hfu"].get<double>(), u.hfu);
}

}  // namespace
}  // namespace ptdp
