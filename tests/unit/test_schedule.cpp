// Pipeline schedules as data: the checker passes every small shape of every
// schedule and fails on broken lists; warm-up lengths, pass orders and
// in-flight counts follow the schedules' formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/schedule/checker.h"
#include "core/schedule/registry.h"

namespace ptdp {
namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += "\n  " + l;
  return s;
}

bool mentions(const ScheduleCheck& c, const std::string& a, const std::string& b = "") {
  return std::any_of(c.problems.begin(), c.problems.end(), [&](const std::string& line) {
    return line.find(a) != std::string::npos && line.find(b) != std::string::npos;
  });
}

// The forwards and backwards of a list, in order, e.g. "F(0,0) B(0,0)".
std::string compute_order(const Program& prog) {
  std::string s;
  for (const Instr& in : prog)
    if (is_compute(in.op)) s += (s.empty() ? "" : " ") + to_string(in);
  return s;
}

// "F" and "B" only: the shape F^w (F B)^(n−w) B^w of a one-forward-one-backward list.
std::string fb_pattern(int n, int warmup) {
  std::string s;
  for (int i = 0; i < warmup; ++i) s += 'F';
  for (int i = 0; i < n - warmup; ++i) s += "FB";
  for (int i = 0; i < warmup; ++i) s += 'B';
  return s;
}

std::string fb_letters(const Program& prog) {
  std::string s;
  for (const Instr& in : prog)
    if (is_compute(in.op)) s += in.op == Op::forward ? 'F' : 'B';
  return s;
}

// Megatron's interleaved warm-up (the schedule's own formula, restated).
int interleaved_warmup(int p, int m, int v, int r) {
  return m == p ? m * v : std::min((p - r - 1) * 2 + (v - 1) * p, m * v);
}

TEST(ScheduleChecker, PassesGpipeAnd1f1bOnEverySmallShape) {
  for (const std::string schedule : {"gpipe", "1f1b"})
    for (int p = 1; p <= 8; ++p)
      for (int m = 1; m <= 16; ++m) {
        const ScheduleCheck c = check_schedule(build_pipeline(schedule, p, m, 1), {p, m, 1, 0});
        EXPECT_TRUE(c.ok) << schedule << " p=" << p << " m=" << m << joined(c.problems);
      }
}

TEST(ScheduleChecker, PassesInterleavedOnEverySmallShape) {
  for (int p = 1; p <= 8; ++p)
    for (int v = 1; v <= 4; ++v)
      for (int m = p; m <= 16; m += p) {
        const ScheduleCheck c = check_schedule(build_pipeline("interleaved", p, m, v), {p, m, v, 0});
        EXPECT_TRUE(c.ok) << "p=" << p << " m=" << m << " v=" << v << joined(c.problems);
      }
}

TEST(ScheduleChecker, InterleavedRefusesMNotAMultipleOfP) {
  EXPECT_THROW(build_program("interleaved", {4, 6, 2, 0}), std::invalid_argument);
  EXPECT_NE(find_schedule("interleaved"), nullptr);
  EXPECT_TRUE(find_schedule("interleaved")->interleaved);
}

// Position of `target` in the list (it must be there).
std::size_t position(const Program& prog, const Instr& target) {
  const auto it = std::find(prog.begin(), prog.end(), target);
  EXPECT_NE(it, prog.end()) << to_string(target);
  return static_cast<std::size_t>(it - prog.begin());
}

TEST(ScheduleChecker, FailsOnAMissingReceive) {
  auto programs = build_pipeline("1f1b", 4, 8, 1);
  Program& rank2 = programs[2];
  rank2.erase(rank2.begin() + static_cast<std::ptrdiff_t>(position(rank2, {Op::recv_forward, 3, 0, 1})));
  const ScheduleCheck c = check_schedule(programs, {4, 8, 1, 0});
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(mentions(c, "rank 2: recv_forward(3,0)<-1", "0 times")) << joined(c.problems);
  EXPECT_TRUE(mentions(c, "channel 1->2", "is matched with")) << joined(c.problems);
}

TEST(ScheduleChecker, FailsOnSwappedReceives) {
  auto programs = build_pipeline("1f1b", 4, 8, 1);
  Program& rank2 = programs[2];
  std::swap(rank2[position(rank2, {Op::recv_forward, 3, 0, 1})], rank2[position(rank2, {Op::recv_forward, 4, 0, 1})]);
  const ScheduleCheck c = check_schedule(programs, {4, 8, 1, 0});
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(mentions(c, "send_forward(3,0)->2 on rank 1 is matched with recv_forward(4,0)<-1 on rank 2"))
      << joined(c.problems);
  EXPECT_TRUE(mentions(c, "rank 2: F(3,0)", "comes before recv_forward(3,0)<-1")) << joined(c.problems);
}

TEST(ScheduleChecker, FailsOnABackwardBeforeItsForward) {
  auto programs = build_pipeline("gpipe", 1, 2, 1);
  Program& rank0 = programs[0];
  std::swap(rank0[position(rank0, {Op::forward, 0, 0})], rank0[position(rank0, {Op::backward, 0, 0})]);
  const ScheduleCheck c = check_schedule(programs, {1, 2, 1, 0});
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(mentions(c, "rank 0: B(0,0) (instruction 0) comes before F(0,0)")) << joined(c.problems);
}

// Both ranks wait for the other before sending anything: each list is fine on
// its own and the messages match, but nothing can ever run.
TEST(ScheduleChecker, FailsOnADeadlock) {
  const std::vector<Program> programs = {
      {{Op::recv_backward, 0, 0, 1}, {Op::forward, 0, 0}, {Op::send_forward, 0, 0, 1}, {Op::backward, 0, 0}},
      {{Op::recv_forward, 0, 0, 0}, {Op::forward, 0, 0}, {Op::backward, 0, 0}, {Op::send_backward, 0, 0, 0}}};
  const ScheduleCheck c = check_schedule(programs, {2, 1, 1, 0});
  EXPECT_FALSE(c.ok);
  ASSERT_EQ(c.problems.size(), 1u) << joined(c.problems);
  EXPECT_TRUE(mentions(c, "deadlock", "rank 0 stuck at recv_backward(0,0)<-1")) << joined(c.problems);
  EXPECT_TRUE(mentions(c, "rank 1 stuck at recv_forward(0,0)<-0")) << joined(c.problems);
}

TEST(ScheduleChecker, FailsOnAnUnreceivedSendAndAWrongPeer) {
  auto programs = build_pipeline("gpipe", 3, 2, 1);
  programs[0].push_back({Op::send_forward, 1, 0, 2});  // a second copy, to the wrong rank
  const ScheduleCheck c = check_schedule(programs, {3, 2, 1, 0});
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(mentions(c, "rank 0: send_forward(1,0)->1 appears 2 times")) << joined(c.problems);
  EXPECT_TRUE(mentions(c, "send_forward(1,0)->2", "wrong peer; expected rank 1")) << joined(c.problems);
  EXPECT_TRUE(mentions(c, "channel 0->2", "has no matching receive")) << joined(c.problems);
}

// 1F1B on rank r: a warm-up of exactly w = min(p−r−1, m) forwards, then m−w
// (forward, backward) pairs, then w backwards: the compute letters are exactly
// F^w (FB)^(m−w) B^w, in micro-batch order for each kind.
TEST(ScheduleShape, OneFOneBWarmupIsMinOfPMinusRMinus1AndM) {
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 16; ++m)
      for (int r = 0; r < p; ++r) {
        const Program prog = build_program("1f1b", {p, m, 1, r});
        const int w = std::min(p - r - 1, m);
        EXPECT_EQ(fb_letters(prog), fb_pattern(m, w)) << "p=" << p << " m=" << m << " r=" << r;
      }
}

TEST(ScheduleShape, InterleavedFollowsMegatronWarmupAndSteadyState) {
  for (int p = 1; p <= 8; ++p)
    for (int v = 1; v <= 4; ++v)
      for (int m = p; m <= 16; m += p)
        for (int r = 0; r < p; ++r) {
          const Program prog = build_program("interleaved", {p, m, v, r});
          EXPECT_EQ(fb_letters(prog), fb_pattern(m * v, interleaved_warmup(p, m, v, r)))
              << "p=" << p << " m=" << m << " v=" << v << " r=" << r;
        }
}

// p=2, m=4, v=2 written out by hand from the pass formulas: forward pass k runs
// chunk (k mod 4)/2 on micro-batch (k/4)·2 + k mod 2; backward pass k the same
// micro-batch on chunk 1 − (k mod 4)/2. Warm-up: 2·(2−r−1) + 2 passes.
TEST(ScheduleShape, InterleavedPassOrderByHand) {
  EXPECT_EQ(compute_order(build_program("interleaved", {2, 4, 2, 0})),
            "F(0,0) F(1,0) F(0,1) F(1,1) "                              // warm-up: 4
            "F(2,0) B(0,1) F(3,0) B(1,1) F(2,1) B(0,0) F(3,1) B(1,0) "  // steady
            "B(2,1) B(3,1) B(2,0) B(3,0)");                             // cool-down
  EXPECT_EQ(compute_order(build_program("interleaved", {2, 4, 2, 1})),
            "F(0,0) F(1,0) "
            "F(0,1) B(0,1) F(1,1) B(1,1) F(2,0) B(0,0) F(3,0) B(1,0) F(2,1) B(2,1) F(3,1) B(3,1) "
            "B(2,0) B(3,0)");
}

TEST(ScheduleShape, InFlightCounts) {
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 16; ++m)
      for (int r = 0; r < p; ++r) {
        EXPECT_EQ(max_in_flight(build_program("1f1b", {p, m, 1, r})), std::min(p - r, m));
        EXPECT_EQ(max_in_flight(build_program("gpipe", {p, m, 1, r})), m);
      }
}

// Interleaved: the warm-up's forwards plus the steady state's first, capped at
// all m·v passes (when m == p there is no steady state: all m·v are in flight).
TEST(ScheduleShape, InterleavedInFlightFollowsItsWarmup) {
  for (int p = 1; p <= 8; ++p)
    for (int v = 1; v <= 4; ++v)
      for (int m = p; m <= 16; m += p)
        for (int r = 0; r < p; ++r) {
          const int expected = std::min(interleaved_warmup(p, m, v, r) + 1, m * v);
          EXPECT_EQ(max_in_flight(build_program("interleaved", {p, m, v, r})), expected)
              << "p=" << p << " m=" << m << " v=" << v << " r=" << r;
        }
}

}  // namespace
}  // namespace ptdp
