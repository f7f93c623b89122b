// Zero-bubble ZB-H1 and ZB-H2 (core/schedule/zero_bubble.cpp): valid lists
// for every small shape, the paper's bubbles under unit costs, their in-flight
// counts, and the checker's rules for split backwards (Bi = backward_input, W = backward_weight).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/results/result.h"
#include "core/results/timeline.h"
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

// Per rank: idle between its own first pass and its last, in unit steps. The
// paper's bubble when the step does not synchronise the ranks: the longest
// span sets the period of back-to-back iterations.
std::vector<double> idle_in_span(const std::string& schedule, int p, int m) {
  std::vector<double> first(static_cast<std::size_t>(p), 1e300), last(static_cast<std::size_t>(p), -1e300),
      busy(static_cast<std::size_t>(p), 0.0);
  for (const TimelineEvent& e : simulate_pipeline(build_pipeline(schedule, p, m, 1), unit_costs())) {
    if (!e.is_instruction() || !is_compute(e.instr.op)) continue;
    const auto r = static_cast<std::size_t>(e.rank);
    first[r] = std::min(first[r], e.start_s), last[r] = std::max(last[r], e.end_s), busy[r] += e.end_s - e.start_s;
  }
  std::vector<double> idle;
  for (std::size_t r = 0; r < first.size(); ++r) idle.push_back(last[r] - first[r] - busy[r]);
  return idle;
}

std::string problems_of(const ScheduleCheck& c) {
  std::string s;
  for (const auto& l : c.problems) s += "\n  " + l;
  return s;
}

std::size_t position(const Program& prog, const Instr& in) {
  return static_cast<std::size_t>(std::find(prog.begin(), prog.end(), in) - prog.begin());
}

TEST(ZeroBubble, BothPassTheCheckerOnEverySmallShape) {
  for (const char* schedule : {"zb-h1", "zb-h2"})
    for (int p = 1; p <= 8; ++p)
      for (int m = 1; m <= 16; ++m) {
        const ScheduleCheck c = check_schedule(build_pipeline(schedule, p, m, 1), {p, m, 1, 0});
        EXPECT_TRUE(c.ok) << schedule << " p=" << p << " m=" << m << problems_of(c);
      }
}

TEST(ZeroBubble, BothRefuseInterleaving) {
  EXPECT_THROW(build_program("zb-h1", {4, 8, 2, 0}), std::invalid_argument);
  EXPECT_THROW(build_program("zb-h2", {4, 8, 2, 0}), std::invalid_argument);
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

// ptdp synchronises the ranks at the step, so rank p−1's wait for its first F
// and rank 0's after its last pass stay: ZB-H2 idles p−1 per rank as ZB-H1
// does, the least any schedule can (rank p−1 starts p−1 steps late with 3m to do).
TEST(ZeroBubble, ZbH2SynchronisedUnitCostBubbleIsZbH1s) {
  for (int p = 1; p <= 8; ++p)
    for (int m = p; m <= 16; ++m) {
      const std::vector<double> zb = unit_bubbles("zb-h2", p, m);
      ASSERT_EQ(static_cast<int>(zb.size()), p);
      for (int r = 0; r < p; ++r)
        EXPECT_NEAR(zb[static_cast<std::size_t>(r)], (p - 1) / (3.0 * m), 1e-9) << "p=" << p << " m=" << m << " rank " << r;
    }
}

// The paper's steady state (no synchronising step): ZB-H1's rank 0 idles
// p−1 = (p−1)·T_W steps inside its span, the period's excess over 3m; ZB-H2,
// the parallelogram, idles none on any rank once m ≥ 2p−1: the paper's
// (p−1)(T_F+T_B−T_W) against (p−1)(T_F+T_B−2T_W) = 0.
TEST(ZeroBubble, ZbH2HasNoIdleInsideAnyRanksSpan) {
  for (int p = 1; p <= 8; ++p)
    for (int m = 2 * p - 1; m <= 16; ++m) {
      const std::vector<double> h1 = idle_in_span("zb-h1", p, m), h2 = idle_in_span("zb-h2", p, m);
      EXPECT_NEAR(*std::max_element(h1.begin(), h1.end()), p - 1, 1e-9) << "p=" << p << " m=" << m;
      for (int r = 0; r < p; ++r)
        EXPECT_NEAR(h2[static_cast<std::size_t>(r)], 0.0, 1e-9) << "p=" << p << " m=" << m << " rank " << r;
    }
}

TEST(ZeroBubble, AnalyticalBubbleIsTheUnitCostOne) {
  Plan plan;
  plan.pp = 4, plan.micro_batch = 1, plan.global_batch = 8, plan.schedule = "zb-h1";
  EXPECT_NEAR(analytical_bubble(plan), 3 / 24.0, 1e-12);
  plan.schedule = "zb-h2";
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

// ZB-H2's p−1−r extra warm-up forwards on rank r: 2(p−r)−1 in flight.
TEST(ZeroBubble, ZbH2KeepsUpTo2pMinus1MicroBatchesInFlight) {
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 16; ++m)
      for (int r = 0; r < p; ++r)
        EXPECT_EQ(max_in_flight(build_program("zb-h2", {p, m, 1, r})), std::min(m, 2 * (p - r) - 1))
            << "p=" << p << " m=" << m << " rank " << r;
}

int most_pending_ws(const Program& prog) {
  int pending = 0, most = 0;
  for (const Instr& in : prog) {
    if (in.op == Op::backward_input) most = std::max(most, ++pending);
    if (in.op == Op::backward_weight) --pending;
  }
  return most;
}

TEST(ZeroBubble, BothDeferWeightGradientsOnlyBoundedly) {
  // What W keeps alive is at most p (ZB-H1) or 2p−1 (ZB-H2) micro-batches' GEMM inputs per rank.
  for (int p = 1; p <= 8; ++p)
    for (int r = 0; r < p; ++r) {
      EXPECT_LE(most_pending_ws(build_program("zb-h1", {p, 16, 1, r})), p) << "p=" << p << " rank " << r;
      EXPECT_LE(most_pending_ws(build_program("zb-h2", {p, 16, 1, r})), 2 * p - 1) << "p=" << p << " rank " << r;
    }
}

TEST(ZeroBubble, CheckerRefusesWBeforeItsB) {
  std::vector<Program> lists = build_pipeline("zb-h1", 2, 4, 1);
  Program& rank1 = lists[1];
  std::swap(rank1[position(rank1, {Op::backward_input, 0, 0})], rank1[position(rank1, {Op::backward_weight, 0, 0})]);
  const ScheduleCheck c = check_schedule(lists, {2, 4, 1, 0});
  EXPECT_FALSE(c.ok);
  EXPECT_NE(problems_of(c).find("W(0,0) (instruction"), std::string::npos) << problems_of(c);
  EXPECT_NE(problems_of(c).find("comes before Bi(0,0)"), std::string::npos) << problems_of(c);
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
  // The whole backward B(3,0) is extra, the split one's Bi(3,0) missing.
  EXPECT_NE(text.find(" B(3,0) appears 1 times, expected 0"), std::string::npos) << text;
  EXPECT_NE(text.find("Bi(3,0) appears 0 times, expected 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace ptdp
