// Zero-bubble ZB-H1 (core/schedule/zero_bubble.cpp): valid lists for every
// small shape, the paper's bubble under unit costs, 1F1B's in-flight count,
// and the checker's rules for split backwards (B = backward_input, W = backward_weight).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/metrics/result.h"
#include "core/metrics/timeline.h"
#include "core/schedule/checker.h"
#include "core/schedule/registry.h"
#include "core/sim/pipeline_sim.h"

namespace ptdp {
namespace {

// T_F = T_B = T_W = 1; the fused backward of the other schedules is B + W = 2.
PipelineCosts unit_costs() {
  return {[](int, const Instr& in) {
            if (in.op == Op::backward) return 2.0;
            return is_compute(in.op) ? 1.0 : 0.0;
          },
          [](int, int, const Instr&) { return 0.0; }};
}

std::vector<double> unit_bubbles(const std::string& schedule, int p, int m) {
  return pipeline_bubble(simulate_pipeline(build_pipeline(schedule, p, m, 1), unit_costs())).bubble;
}

std::string problems_of(const ScheduleCheck& c) {
  std::string s;
  for (const auto& l : c.problems) s += "\n  " + l;
  return s;
}

std::size_t position(const Program& prog, const Instr& in) {
  return static_cast<std::size_t>(std::find(prog.begin(), prog.end(), in) - prog.begin());
}

TEST(ZeroBubble, ZbH1PassesTheCheckerOnEverySmallShape) {
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 16; ++m) {
      const ScheduleCheck c = check_schedule(build_pipeline("zb-h1", p, m, 1), {p, m, 1, 0});
      EXPECT_TRUE(c.ok) << "p=" << p << " m=" << m << problems_of(c);
    }
}

TEST(ZeroBubble, ZbH1RefusesInterleaving) {
  EXPECT_THROW(build_program("zb-h1", {4, 8, 2, 0}), std::invalid_argument);
}

// Idle per rank: 1F1B (p−1)(T_F+T_B+T_W) = 3(p−1), ZB-H1 (p−1)(T_F+T_B−T_W) =
// p−1, over 3m busy: bubbles (p−1)/m and (p−1)/(3m).
TEST(ZeroBubble, ZbH1UnitCostBubbleIsTheThirdOf1f1bs) {
  for (int p = 1; p <= 8; ++p)
    for (int m = p; m <= 16; ++m) {
      const std::vector<double> zb = unit_bubbles("zb-h1", p, m), base = unit_bubbles("1f1b", p, m);
      ASSERT_EQ(static_cast<int>(zb.size()), p);
      for (int r = 0; r < p; ++r) {
        EXPECT_NEAR(zb[static_cast<std::size_t>(r)], (p - 1) / (3.0 * m), 1e-9) << "p=" << p << " m=" << m << " rank " << r;
        EXPECT_NEAR(base[static_cast<std::size_t>(r)], (p - 1) / static_cast<double>(m), 1e-9);
      }
    }
}

TEST(ZeroBubble, AnalyticalBubbleIsTheUnitCostOne) {
  Plan plan;
  plan.pp = 4, plan.micro_batch = 1, plan.global_batch = 8, plan.schedule = "zb-h1";
  EXPECT_NEAR(analytical_bubble(plan), 3 / 24.0, 1e-12);
  plan.schedule = "1f1b";
  EXPECT_NEAR(analytical_bubble(plan), 3 / 8.0, 1e-12);
}

TEST(ZeroBubble, ZbH1KeepsAtMost1f1bsMicroBatchesInFlight) {
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 16; ++m)
      for (int r = 0; r < p; ++r)
        EXPECT_EQ(max_in_flight(build_program("zb-h1", {p, m, 1, r})), max_in_flight(build_program("1f1b", {p, m, 1, r})))
            << "p=" << p << " m=" << m << " rank " << r;
}

TEST(ZeroBubble, ZbH1DefersWeightGradientsOnlyBoundedly) {
  // What W keeps alive is at most p micro-batches' GEMM inputs per rank.
  for (int p = 1; p <= 8; ++p)
    for (int r = 0; r < p; ++r) {
      int pending = 0, most = 0;
      for (const Instr& in : build_program("zb-h1", {p, 16, 1, r})) {
        if (in.op == Op::backward_input) most = std::max(most, ++pending);
        if (in.op == Op::backward_weight) --pending;
      }
      EXPECT_LE(most, p) << "p=" << p << " rank " << r;
    }
}

TEST(ZeroBubble, CheckerRefusesWBeforeItsB) {
  std::vector<Program> lists = build_pipeline("zb-h1", 2, 4, 1);
  Program& rank1 = lists[1];
  std::swap(rank1[position(rank1, {Op::backward_input, 0, 0})], rank1[position(rank1, {Op::backward_weight, 0, 0})]);
  const ScheduleCheck c = check_schedule(lists, {2, 4, 1, 0});
  EXPECT_FALSE(c.ok);
  EXPECT_NE(problems_of(c).find("W(0,0) (instruction"), std::string::npos) << problems_of(c);
  EXPECT_NE(problems_of(c).find("comes before B(0,0)"), std::string::npos) << problems_of(c);
}

TEST(ZeroBubble, CheckerRefusesAMissingOrDoubledW) {
  std::vector<Program> lists = build_pipeline("zb-h1", 2, 4, 1);
  Program& rank0 = lists[0];
  rank0.erase(rank0.begin() + static_cast<std::ptrdiff_t>(position(rank0, {Op::backward_weight, 2, 0})));
  rank0.push_back({Op::backward_weight, 1, 0});
  const std::string text = problems_of(check_schedule(lists, {2, 4, 1, 0}));
  EXPECT_NE(text.find("W(2,0) appears 0 times, expected 1"), std::string::npos) << text;
  EXPECT_NE(text.find("W(1,0) appears 2 times, expected 1"), std::string::npos) << text;
}

TEST(ZeroBubble, CheckerRefusesASendOfTheGradientBeforeItsB) {
  std::vector<Program> lists = build_pipeline("zb-h1", 2, 4, 1);
  Program& rank1 = lists[1];
  const std::size_t b = position(rank1, {Op::backward_input, 1, 0});
  ASSERT_EQ(rank1[b + 1].op, Op::send_backward);
  std::swap(rank1[b], rank1[b + 1]);
  const std::string text = problems_of(check_schedule(lists, {2, 4, 1, 0}));
  EXPECT_NE(text.find("send_backward(1,0)->0 (instruction"), std::string::npos) << text;
}

TEST(ZeroBubble, CheckerRefusesAWholeBackwardInASplitList) {
  std::vector<Program> lists = build_pipeline("zb-h1", 2, 4, 1);
  Program& rank0 = lists[0];
  rank0[position(rank0, {Op::backward_input, 3, 0})].op = Op::backward;
  const std::string text = problems_of(check_schedule(lists, {2, 4, 1, 0}));
  // Both backwards print as B: the whole one is extra, the split one missing.
  EXPECT_NE(text.find("B(3,0) appears 1 times, expected 0"), std::string::npos) << text;
  EXPECT_NE(text.find("B(3,0) appears 0 times, expected 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace ptdp
