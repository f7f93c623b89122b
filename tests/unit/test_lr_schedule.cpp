// Learning-rate schedules (core/optim/lr_schedule.h): lr_at against the closed
// forms at chosen iterations for each style; validate() refusing nonsense,
// naming the field (and `ptdp train` exiting 2); the trainer stepping with
// lr_at's rate and a resumed run continuing a warmup + cosine schedule bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "core/config/config.h"
#include "core/optim/lr_schedule.h"
#include "tests/checkpoint_test_util.h"
#include "tests/cli_test_util.h"
#include "tests/config_test_util.h"
#include "tests/equivalence_config.h"

namespace ptdp {
namespace {

constexpr double kLr = 0.01, kMin = 0.001, kInit = 0.0001;
constexpr double kTol = 1e-15;  // a few ulps of 0.01: the same formula, evaluated once

// Warmup over iterations 0..10, decay to min_lr at iteration 110 (a 100-iteration decay).
OptimizerConfig schedule(LrDecayStyle style) {
  OptimizerConfig o;
  o.lr = kLr;
  o.min_lr = kMin;
  o.lr_warmup_init = kInit;
  o.lr_warmup_iters = 10;
  o.lr_decay_style = style;
  o.lr_decay_iters = style == LrDecayStyle::constant ? 0 : 110;
  return o;
}

// min_lr + c·(lr - min_lr): where the decay stands at coefficient c.
double at_coefficient(double c) { return kMin + c * (kLr - kMin); }

TEST(LrSchedule, DefaultIsTheConstantLr) {
  const OptimizerConfig o;
  for (const std::int64_t i : {0, 1, 7, 100000}) EXPECT_EQ(lr_at(o, i), o.lr) << "iteration " << i;
}

TEST(LrSchedule, WarmupRisesLinearlyThenConstantHolds) {
  const OptimizerConfig o = schedule(LrDecayStyle::constant);
  EXPECT_EQ(lr_at(o, 0), kInit);
  EXPECT_NEAR(lr_at(o, 5), kInit + (kLr - kInit) / 2, kTol);
  EXPECT_NEAR(lr_at(o, 3), kInit + (kLr - kInit) * 0.3, kTol);
  EXPECT_EQ(lr_at(o, 10), kLr);
  EXPECT_EQ(lr_at(o, 11), kLr);
  EXPECT_EQ(lr_at(o, 5000), kLr);
}

TEST(LrSchedule, LinearDecay) {
  const OptimizerConfig o = schedule(LrDecayStyle::linear);
  EXPECT_EQ(lr_at(o, 10), kLr);
  EXPECT_NEAR(lr_at(o, 35), at_coefficient(0.75), kTol);  // a quarter of the decay
  EXPECT_NEAR(lr_at(o, 60), at_coefficient(0.5), kTol);
  EXPECT_NEAR(lr_at(o, 110), kMin, kTol);
  EXPECT_EQ(lr_at(o, 111), kMin);
}

TEST(LrSchedule, CosineDecay) {
  const OptimizerConfig o = schedule(LrDecayStyle::cosine);
  EXPECT_EQ(lr_at(o, 10), kLr);
  EXPECT_NEAR(lr_at(o, 35), at_coefficient((1 + std::numbers::sqrt2 / 2) / 2), kTol);  // cos(π/4) = √2/2
  EXPECT_NEAR(lr_at(o, 60), at_coefficient(0.5), kTol);
  EXPECT_NEAR(lr_at(o, 85), at_coefficient((1 - std::numbers::sqrt2 / 2) / 2), kTol);
  EXPECT_NEAR(lr_at(o, 110), kMin, kTol);
  EXPECT_EQ(lr_at(o, 200), kMin);
}

// WSD: stable at lr until the anneal's 20 iterations (90..110), then each shape
// at q = 1/4 and 1/2 of the anneal.
TEST(LrSchedule, WsdHoldsThenAnnealsInEachShape) {
  OptimizerConfig o = schedule(LrDecayStyle::wsd);
  o.lr_wsd_decay_iters = 20;
  const struct {
    WsdDecayStyle style;
    double quarter, half;  // the coefficient at q = 1/4 and q = 1/2
  } shapes[] = {
      {WsdDecayStyle::exponential, 2 * std::pow(2.0, -0.25) - 1, std::numbers::sqrt2 - 1},  // 2·0.5^q − 1
      {WsdDecayStyle::linear, 0.75, 0.5},
      {WsdDecayStyle::cosine, (1 + std::numbers::sqrt2 / 2) / 2, 0.5},
      {WsdDecayStyle::minus_sqrt, 0.5, 1 - std::numbers::sqrt2 / 2},  // 1 − √q
  };
  for (const auto& s : shapes) {
    o.lr_wsd_decay_style = s.style;
    const std::string name = spelling(s.style);
    EXPECT_EQ(lr_at(o, 10), kLr) << name;
    EXPECT_NEAR(lr_at(o, 90), kLr, kTol) << name;  // min_lr + 1·(lr − min_lr)
    EXPECT_NEAR(lr_at(o, 95), at_coefficient(s.quarter), kTol) << name;
    EXPECT_NEAR(lr_at(o, 100), at_coefficient(s.half), kTol) << name;
    EXPECT_NEAR(lr_at(o, 110), kMin, kTol) << name;
    EXPECT_EQ(lr_at(o, 111), kMin) << name;
  }
}

// The tiny config with `optimizer` merged over its optimizer section.
ConfigErrors problems_with(const nlohmann::json& optimizer) {
  nlohmann::json j = test::tiny_config_json();
  j["optimizer"].update(optimizer);
  return test::config_problems(j);
}

TEST(LrSchedule, ASoundScheduleIsAccepted) {
  const auto e = problems_with({{"min_lr", 0.0003}, {"lr_warmup_iters", 10}, {"lr_decay_style", "WSD"},
                                {"lr_decay_iters", 110}, {"lr_wsd_decay_iters", 100}, {"lr_wsd_decay_style", "cosine"}});
  EXPECT_TRUE(e.empty()) << test::errors_text(e);
}

TEST(LrSchedule, NonsenseIsRefusedNamingTheField) {
  using test::refused;
  EXPECT_TRUE(refused(problems_with({{"min_lr", 0.004}}), "optimizer.min_lr", {"at most optimizer.lr"}));
  EXPECT_TRUE(refused(problems_with({{"lr_warmup_init", 0.01}}), "optimizer.lr_warmup_init", {"at most"}));
  EXPECT_TRUE(refused(problems_with({{"lr_warmup_iters", -1}}), "optimizer.lr_warmup_iters"));
  const nlohmann::json cosine = {{"lr_decay_style", "cosine"}, {"lr_warmup_iters", 10}};
  EXPECT_TRUE(refused(problems_with(cosine), "optimizer.lr_decay_iters", {"positive"}));
  EXPECT_TRUE(refused(problems_with({{"lr_decay_style", "cosine"}, {"lr_warmup_iters", 10}, {"lr_decay_iters", 10}}),
                      "optimizer.lr_decay_iters", {"above optimizer.lr_warmup_iters"}));
  EXPECT_TRUE(refused(problems_with({{"lr_decay_iters", 100}}), "optimizer.lr_decay_iters", {"no effect"}));
  EXPECT_TRUE(refused(problems_with({{"lr_decay_style", "cosin"}}), "optimizer.lr_decay_style"));
  EXPECT_TRUE(refused(problems_with({{"lr_wsd_decay_iters", 5}, {"lr_decay_style", "linear"}, {"lr_decay_iters", 9}}),
                      "optimizer.lr_wsd_decay_iters", {"no effect"}));
  const nlohmann::json wsd = {{"lr_decay_style", "WSD"}, {"lr_warmup_iters", 10}, {"lr_decay_iters", 30}};
  EXPECT_TRUE(refused(problems_with(wsd), "optimizer.lr_wsd_decay_iters", {"positive"}));
  nlohmann::json too_long = wsd;
  too_long["lr_wsd_decay_iters"] = 21;
  EXPECT_TRUE(refused(problems_with(too_long), "optimizer.lr_wsd_decay_iters", {"at most", "20"}));
  EXPECT_TRUE(refused(problems_with({{"lr_wsd_decay_style", "square"}}), "optimizer.lr_wsd_decay_style"));
}

TEST(LrSchedule, TrainRefusesABadScheduleWithExit2) {
  test::ScratchDir dir("lr-refused");
  nlohmann::json j = test::tiny_config_json();
  j["optimizer"]["min_lr"] = 0.5;
  const auto config = dir.write("bad.json", j.dump());
  const test::Run r = test::run_command(test::ptdp_cli() + " train --config " + config.string() + " --iterations 1", dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("optimizer.min_lr"), std::string::npos) << r.err;
}

// Warmup over 2 iterations, cosine decay to a tenth of lr at iteration 6.
Config scheduled(int dp, bool distributed_optimizer) {
  Config c = test::equivalence_config();
  c.plan.dp = dp;
  c.plan.dp_sharding = distributed_optimizer ? DpSharding::optimizer : DpSharding::none;
  c.optimizer.min_lr = c.optimizer.lr / 10;
  c.optimizer.lr_warmup_iters = 2;
  c.optimizer.lr_decay_style = LrDecayStyle::cosine;
  c.optimizer.lr_decay_iters = 6;
  return c;
}

// The trainer steps with lr_at's rate (recorded beside the loss), and the rate
// moves the weights: the scheduled losses part from the constant-lr run's.
TEST(LrSchedule, TrainerStepsWithLrAt) {
  const Config cfg = scheduled(1, false);
  auto world = make_in_process_world(1, 60, nullptr);
  const std::vector<double> losses = test::run_rank_threads(world, [&](int, Communicator& comm) {
    CpuAllocator alloc(comm.rank());
    CpuOps ops(alloc);
    ProcessGroups groups = make_process_groups(comm, test::plan_topology(cfg));
    auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
    Trainer trainer(cfg, ops, groups, *data);
    std::vector<double> out;
    for (int i = 0; i < 4; ++i) {
      const IterationRecord rec = trainer.step(i);
      EXPECT_EQ(rec.lr, lr_at(cfg.optimizer, i)) << "iteration " << i;
      out.push_back(rec.loss);
    }
    return out;
  });
  const std::vector<double> constant = test::train_span_on_threads(test::equivalence_config(), 0, 4, {}, {});
  EXPECT_EQ(losses[0], constant[0]);  // the same starting weights and batch
  for (int i = 1; i < 4; ++i) EXPECT_NE(losses[i], constant[i]) << "iteration " << i;
}

// 2N iterations straight equal N, a checkpoint, and N resumed: the schedule is
// a function of the saved iteration, so warmup and cosine continue bit for bit
// (whole optimizer state, and sharded over d = 2).
TEST(LrSchedule, ResumedRunContinuesTheScheduleBitForBit) {
  constexpr int kN = 3;  // the checkpoint falls after the warmup, inside the cosine decay
  for (const bool distributed : {false, true}) {
    test::ScratchDir dir(std::string("lr-resume") + (distributed ? "-distopt" : ""));
    const Config cfg = scheduled(distributed ? 2 : 1, distributed);
    const std::vector<double> full = test::train_span_on_threads(cfg, 0, 2 * kN);
    test::train_span_on_threads(cfg, 0, kN, {}, dir.path());
    const std::vector<double> resumed = test::train_span_on_threads(cfg, kN, 2 * kN, dir.path());
    ASSERT_EQ(resumed.size(), static_cast<std::size_t>(kN));
    for (int i = 0; i < kN; ++i)
      EXPECT_EQ(resumed[i], full[kN + i]) << "iteration " << kN + i << (distributed ? " distopt" : "");
  }
}

}  // namespace
}  // namespace ptdp
