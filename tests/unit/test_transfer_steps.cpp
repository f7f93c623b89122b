// Transfer steps (consecutive send/receive instructions) and the simulation of
// grouped steps (core/schedule/deadlock.h): GPipe and 1F1B on every small
// shape, and interleaved without a steady state (m = p), pair up without a
// wait cycle; interleaved's steady state does not (the executor then does not
// group); a hand-made cycle is found.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/schedule/deadlock.h"
#include "core/schedule/registry.h"

namespace ptdp {
namespace {

TEST(TransferSteps, ConsecutiveTransfersFormOneStep) {
  const Program prog{{Op::forward, 0, 0},         {Op::send_forward, 0, 0, 1}, {Op::recv_backward, 1, 0, 1},
                     {Op::backward, 1, 0},        {Op::send_backward, 1, 0, 0}};
  EXPECT_EQ(transfer_step_end(prog, 0), 0u);
  EXPECT_EQ(transfer_step_end(prog, 1), 3u);
  EXPECT_EQ(transfer_step_end(prog, 4), 5u);
}

TEST(TransferSteps, GroupedGpipeAnd1f1bNeverWaitInACycle) {
  for (const char* schedule : {"gpipe", "1f1b"})
    for (int p = 2; p <= 5; ++p)
      for (int m = 1; m <= 9; ++m)
        EXPECT_EQ(grouped_steps_deadlock(build_pipeline(schedule, p, m, 1)), "")
            << schedule << " p=" << p << " m=" << m;
}

// With m == p the interleaved schedule runs all forwards, then all backwards.
TEST(TransferSteps, GroupedInterleavedWithoutSteadyStateNeverWaitsInACycle) {
  for (int p = 2; p <= 4; ++p)
    for (int v = 2; v <= 3; ++v)
      EXPECT_EQ(grouped_steps_deadlock(build_pipeline("interleaved", p, p, v)), "") << "p=" << p << " v=" << v;
}

// In the steady state rank 0's send_backward of its last chunk goes around the
// ring to rank p−1, which is still in its step {send_backward, recv_forward}
// with rank p−2, and so on down to rank 0 (on p = 2 the ring is the pair):
// the reason the executor issues these transfers ungrouped.
TEST(TransferSteps, GroupedInterleavedSteadyStateWaitsInACycle) {
  for (int p = 2; p <= 4; ++p)
    EXPECT_NE(grouped_steps_deadlock(build_pipeline("interleaved", p, 2 * p, 2)), "") << "p=" << p;
}

// The simulation can fail: a rank that waits for a gradient before sending the
// activation that produces it deadlocks.
TEST(TransferSteps, SimulationFindsACycle) {
  const std::vector<Program> programs{
      {{Op::forward, 0, 0}, {Op::recv_backward, 0, 0, 1}, {Op::backward, 0, 0}, {Op::send_forward, 0, 0, 1}},
      {{Op::recv_forward, 0, 0, 0}, {Op::forward, 0, 0}, {Op::backward, 0, 0}, {Op::send_backward, 0, 0, 0}}};
  EXPECT_NE(grouped_steps_deadlock(programs), "");
}

// The classification table: transfers are exactly the ops that name a
// neighbour, and each one's neighbour is the stage its data comes from / goes to.
TEST(OpTraits, TransfersNameTheirNeighbour) {
  for (const OpTraits& t : kOpTraits) {
    EXPECT_EQ(is_transfer(t.op), t.peer != PeerSide::none) << t.name;
    EXPECT_FALSE(t.send && t.recv) << t.name;
    EXPECT_EQ(t.slot >= 0, is_transfer(t.op) || is_compute(t.op)) << t.name;
  }
  EXPECT_EQ(traits(Op::recv_forward).peer, PeerSide::upstream);
  EXPECT_EQ(traits(Op::send_forward).peer, PeerSide::downstream);
  EXPECT_EQ(traits(Op::recv_backward).peer, PeerSide::downstream);
  EXPECT_EQ(traits(Op::send_backward).peer, PeerSide::upstream);
  EXPECT_EQ(op_name(Op::forward), "F");
  EXPECT_EQ(op_name(Op::optimizer_step), "optimizer_step");
}

// Each Op prints as its own name (a trace reads the Op back by it): the whole
// backward B, the zero-bubble halves Bi (input gradient) and W (weights).
TEST(OpTraits, EveryOpHasItsOwnName) {
  EXPECT_EQ(op_name(Op::backward), "B");
  EXPECT_EQ(op_name(Op::backward_input), "Bi");
  EXPECT_EQ(op_name(Op::backward_weight), "W");
  for (const OpTraits& t : kOpTraits) EXPECT_EQ(op_from_name(t.name), t.op) << t.name;
  EXPECT_EQ(op_from_name("b"), std::nullopt);
  EXPECT_EQ(op_from_name(""), std::nullopt);
}

// The order run: a receive with no send before it on the peer deadlocks; the
// same lists with the send first run; reduce_tied on a middle rank is refused.
TEST(OrderRun, FindsAReceiveThatWaitsForever) {
  const std::vector<Program> stuck{{{Op::recv_backward, 0, 0, 1}, {Op::send_forward, 0, 0, 1}},
                                   {{Op::recv_forward, 0, 0, 0}, {Op::send_backward, 0, 0, 0}}};
  const std::string what = order_deadlock(stuck);
  EXPECT_NE(what.find("rank 0 stuck at recv_backward(0,0)<-1"), std::string::npos) << what;
  EXPECT_NE(what.find("rank 1 stuck at recv_forward(0,0)<-0"), std::string::npos) << what;
  EXPECT_NE(what.find("waiting for message 0 from rank 1"), std::string::npos) << what;  // none arrived yet
  const std::vector<Program> runs{{{Op::send_forward, 0, 0, 1}, {Op::recv_backward, 0, 0, 1}},
                                  {{Op::recv_forward, 0, 0, 0}, {Op::send_backward, 0, 0, 0}}};
  EXPECT_EQ(order_deadlock(runs), "");
  EXPECT_THROW(order_deadlock({{}, {{Op::reduce_tied}}, {}}), std::logic_error);
}

}  // namespace
}  // namespace ptdp
