// The pipeline executor: times worked out by hand, deadlocks and mismatches
// refused, the unit-cost bubble exactly (p−1)/m and (p−1)/(v·m) on every rank,
// and a run of the 1T-parameter pipeline's size.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "core/schedule/registry.h"
#include "core/sim/pipeline_sim.h"

namespace ptdp {
namespace {

// The paper's unit costs: a forward of the whole rank's layers takes 1, its
// backward 2, split evenly over the v chunks; everything else is free.
PipelineCosts unit_costs(int v) {
  const double fwd = 1.0 / v, bwd = 2.0 / v;
  return {[fwd, bwd](int, const Instr& in) { return in.op == Op::forward ? fwd : in.op == Op::backward ? bwd : 0.0; },
          [](int, int, const Instr&) { return 0.0; }};
}

const TimelineEvent& event_of(const Timeline& t, int rank, const Instr& instr) {
  for (const auto& e : t)
    if (e.rank == rank && e.instr == instr) return e;
  ADD_FAILURE() << "no event for " << to_string(instr) << " on rank " << rank;
  return t.front();
}

// Checks every rank's bubble against `expected`, for one schedule and shape.
void expect_bubble(const std::string& schedule, int p, int m, int v, double expected) {
  const BubbleStats b = pipeline_bubble(simulate_pipeline(build_pipeline(schedule, p, m, v), unit_costs(v)));
  ASSERT_EQ(static_cast<int>(b.ranks.size()), p);
  for (std::size_t i = 0; i < b.ranks.size(); ++i)
    EXPECT_NEAR(b.bubble[i], expected, 1e-9)
        << schedule << " p=" << p << " m=" << m << " v=" << v << " rank " << b.ranks[i];
}

TEST(PipelineSimBubble, GpipeAnd1f1bAreExactlyPMinus1OverM) {
  for (const std::string schedule : {"gpipe", "1f1b"})
    for (int p = 1; p <= 8; ++p)
      for (int m = 1; m <= 16; ++m) expect_bubble(schedule, p, m, 1, (p - 1) / static_cast<double>(m));
}

TEST(PipelineSimBubble, InterleavedIsExactlyPMinus1OverVM) {
  for (int p = 1; p <= 8; ++p)
    for (int v = 1; v <= 4; ++v)
      for (int m = p; m <= 4 * p; m += p) expect_bubble("interleaved", p, m, v, (p - 1) / static_cast<double>(v * m));
}

TEST(PipelineSim, SingleRankTimeIsTheSumOfItsCosts) {
  // p = 1, v = 2: chunk 0 hands its output to chunk 1 on the same rank, so the
  // list has sends and receives too; with no transfer time none of them waits.
  const Program prog = build_program("interleaved", {1, 3, 2, 0});
  double sum = 0;
  // Durations by Op: recv_forward, F, send_forward, recv_backward, B, send_backward,
  // backward_input, backward_weight (unused here), reduce_tied, reduce_grads, optimizer_step.
  constexpr OpTable<double> kDuration = op_table<double>(0.0, 0.75, 0.125, 0.0, 1.5, 0.125, 1.0, 0.5, 0.0, 0.25, 0.5);
  const PipelineCosts costs{[&](int, const Instr& in) { return kDuration[op_index(in.op)]; },
                            [](int, int, const Instr&) { return 0.0; }};
  for (const Instr& in : prog) sum += costs.duration(0, in);
  const Timeline t = simulate_pipeline({prog}, costs);
  ASSERT_EQ(t.size(), prog.size());
  EXPECT_DOUBLE_EQ(t.back().end_s, sum);
  for (std::size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i].instr, prog[i]);
  for (std::size_t i = 1; i < t.size(); ++i) EXPECT_DOUBLE_EQ(t[i].start_s, t[i - 1].end_s);  // never idle
}

// p = 2, m = 1, 1F1B: F = 1, B = 2, a send occupies its sender 0.1, reduce_tied
// 0.25, and a transfer takes L = 0.5 from the send's start. By hand:
//   rank 0: F [0,1], send_forward [1,1.1], recv_backward [1.1,5], B [5,7]
//   rank 1: recv_forward [0,1.5], F [1.5,2.5], B [2.5,4.5], send_backward [4.5,4.6]
//   (the gradient arrives at 4.5 + 0.5 = 5), reduce_tied on both [7,7.25].
TEST(PipelineSim, TransferLatencyDelaysTheReceiverByHand) {
  // Durations by Op, in enum order as above.
  constexpr OpTable<double> kDuration = op_table<double>(0.0, 1.0, 0.1, 0.0, 2.0, 0.1, 1.0, 1.0, 0.25, 0.0, 0.0);
  const PipelineCosts costs{[&](int, const Instr& in) { return kDuration[op_index(in.op)]; },
                            [](int, int, const Instr&) { return 0.5; }};
  const Timeline t = simulate_pipeline(build_pipeline("1f1b", 2, 1, 1), costs);
  const auto span = [&](int rank, Instr in) {
    const TimelineEvent& e = event_of(t, rank, in);
    return std::pair{e.start_s, e.end_s};
  };
  using P = std::pair<double, double>;
  EXPECT_EQ(span(0, {Op::send_forward, 0, 0, 1}), (P{1.0, 1.1}));
  EXPECT_EQ(span(1, {Op::recv_forward, 0, 0, 0}), (P{0.0, 1.5}));
  EXPECT_EQ(span(1, {Op::forward, 0, 0}), (P{1.5, 2.5}));
  EXPECT_EQ(span(1, {Op::send_backward, 0, 0, 0}), (P{4.5, 4.6}));
  EXPECT_NEAR(span(0, {Op::recv_backward, 0, 0, 1}).second, 5.0, 1e-12);
  EXPECT_NEAR(span(0, {Op::backward, 0, 0}).first, 5.0, 1e-12);
  EXPECT_NEAR(span(0, {Op::reduce_tied}).first, 7.0, 1e-12);
  EXPECT_NEAR(span(1, {Op::reduce_tied}).first, 7.0, 1e-12);  // waited for rank 0
  EXPECT_NEAR(span(1, {Op::reduce_tied}).second, 7.25, 1e-12);
}

TEST(PipelineSim, DeadlockNamesEachStuckRank) {
  const std::vector<Program> programs = {
      {{Op::recv_backward, 0, 0, 1}, {Op::forward, 0, 0}, {Op::send_forward, 0, 0, 1}, {Op::backward, 0, 0}},
      {{Op::recv_forward, 0, 0, 0}, {Op::forward, 0, 0}, {Op::backward, 0, 0}, {Op::send_backward, 0, 0, 0}}};
  try {
    simulate_pipeline(programs, zero_costs());
    FAIL() << "no DeadlockError";
  } catch (const DeadlockError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 0 stuck at recv_backward(0,0)<-1"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 1 stuck at recv_forward(0,0)<-0"), std::string::npos) << what;
  }
}

TEST(PipelineSim, ReduceTiedWithoutItsPartnerDeadlocks) {
  auto programs = build_pipeline("gpipe", 3, 2, 1);
  std::erase(programs[2], Instr{Op::reduce_tied});
  EXPECT_THROW(simulate_pipeline(programs, zero_costs()), DeadlockError);
}

TEST(PipelineSim, MismatchedMessagesAreALogicError) {
  auto programs = build_pipeline("gpipe", 2, 2, 1);
  auto& rank0 = programs[0];
  std::swap(rank0[1], rank0[3]);  // send_forward(0,0) and send_forward(1,0) trade places
  ASSERT_EQ(rank0[1], (Instr{Op::send_forward, 1, 0, 1}));
  try {
    simulate_pipeline(programs, zero_costs());
    FAIL() << "no logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("send_forward(1,0)->1 on rank 0 is matched (in channel order) with "
                                         "recv_forward(0,0)<-0 on rank 1"),
              std::string::npos)
        << e.what();
  }
}

// The size of the paper's 1T-parameter pipeline and more micro-batches than it
// runs: completes, and the unit-cost bubble still holds on every rank.
TEST(PipelineSim, LargePipelineTiming) {
  const int p = 64, m = 256, v = 2;
  const auto programs = build_pipeline("interleaved", p, m, v);
  std::size_t n = 0;
  for (const auto& prog : programs) n += prog.size();
  const auto t0 = std::chrono::steady_clock::now();
  const Timeline t = simulate_pipeline(programs, unit_costs(v));
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "simulate_pipeline p=64 m=256 v=2: " << n << " instructions in " << ms << " ms\n";
  RecordProperty("simulate_ms", std::to_string(ms));
  EXPECT_EQ(t.size(), n);
  const BubbleStats b = pipeline_bubble(t);
  for (double bubble : b.bubble) EXPECT_NEAR(bubble, 63.0 / 512.0, 1e-9);
}

}  // namespace
}  // namespace ptdp
