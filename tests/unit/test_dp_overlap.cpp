// The simulator's overlapped data-parallel reduction (overlap_grad_reduce,
// core/sim/dp_overlap.h): the runtime's buckets on a hand-sized model, when
// reduce_grads ends, and what the overlap does to a projection.
#include <gtest/gtest.h>

#include "core/sim/comm_model.h"
#include "core/sim/cost_model.h"
#include "core/sim/projector.h"

namespace ptdp {
namespace {

// l = 2, h = 64, a = 4, s = 64, V = 128 on one stage, d = 2, m = 2. Gradient
// buffer (tp = 1): word 128·64 = 8192 (tied, deferred), position 64·64 = 4096,
// two layers of 12h² + 13h = 49984, head layernorm 2h = 128: N = 112384, so
// buckets of N/4 = 28096 elements (bucket_elements_for), cut at whole pieces:
// [word, position, layer 0] = 62272, [layer 1] = 49984, [head] = 128.
Config tiny(bool overlap) {
  Config c;
  c.model = {2, 64, 4, 64, 128, 0, 0.1};
  c.plan.precision = Precision::fp16;
  c.plan.recompute = Recompute::full;
  c.plan.dp = 2, c.plan.micro_batch = 1, c.plan.global_batch = 4;
  c.plan.overlap_grad_reduce = overlap;
  c.machine = load_machine("a100-80gb", default_machines_dir());
  return c;
}

double all_reduce(const Config& c, double elements) {
  const Topology topo{1, 1, 2, c.machine.gpus_per_node};
  return CommModel(c.machine, nullptr).all_reduce(4 * elements, group_placement(topo, topo.dp_group(0)));
}

// The shares of the last backward after which the head and layer 1 are final:
// head first, then the layers from the last, then the embedding.
struct Shares {
  double head, layer1;
};
Shares shares(const CostModel& m) {
  const double head = m.edges().head_backward.total();
  const double layer = m.layer().backward.total() + m.layer().recompute.total();
  const double total = head + 2 * layer + m.edges().embedding_backward.total();
  return {head / total, (head + layer) / total};
}

TEST(DpOverlap, BucketsAreTheRuntimesOnAHandSizedModel) {
  const Config c = tiny(true);
  const CostModel m(c, nullptr);
  ASSERT_EQ(m.dp_overlap().size(), 1u);
  const auto& b = m.dp_overlap()[0].buckets();
  ASSERT_EQ(b.size(), 3u);  // launch order: head, layer 1, then the deferred one
  const Shares f = shares(m);
  EXPECT_DOUBLE_EQ(b[0].comm_s, all_reduce(c, 128));
  EXPECT_DOUBLE_EQ(b[1].comm_s, all_reduce(c, 49984));
  EXPECT_DOUBLE_EQ(b[2].comm_s, all_reduce(c, 62272));
  EXPECT_FALSE(b[0].deferred);
  EXPECT_FALSE(b[1].deferred);
  EXPECT_TRUE(b[2].deferred);
  ASSERT_EQ(b[0].needs.size(), 1u);
  ASSERT_EQ(b[1].needs.size(), 1u);
  EXPECT_DOUBLE_EQ(b[0].needs[0].fraction, f.head);
  EXPECT_DOUBLE_EQ(b[1].needs[0].fraction, f.layer1);
}

// The chunk's last backward spans [s, e] and reduce_grads starts at e: the head's
// bucket goes at s + f_head·(e − s), layer 1's after it (or once final), the
// deferred one once both are done and reduce_grads has begun.
double hand_end(const CostModel& m, double s, double e) {
  const auto& b = m.dp_overlap()[0].buckets();
  const Shares f = shares(m);
  double free = s + f.head * (e - s) + b[0].comm_s;
  free = std::max(free, s + f.layer1 * (e - s)) + b[1].comm_s;
  return std::max(free, e) + b[2].comm_s;
}

TEST(DpOverlap, ReductionEndsWhereTheChannelDrains) {
  const CostModel m(tiny(true), nullptr);
  const DpOverlap& o = m.dp_overlap()[0];
  EXPECT_DOUBLE_EQ(o.end(1.0, {{Op::backward, 0.0, 1.0}}), hand_end(m, 0.0, 1.0));
  // A zero-bubble W makes its chunk final at its end: nothing overlaps.
  const auto& b = o.buckets();
  EXPECT_DOUBLE_EQ(o.end(1.0, {{Op::backward_weight, 0.0, 1.0}}), 1.0 + b[0].comm_s + b[1].comm_s + b[2].comm_s);
  // Never before reduce_grads is reached.
  EXPECT_DOUBLE_EQ(o.end(5.0, {{Op::backward, 0.0, 1.0}}), 5.0 + b[2].comm_s);
}

TEST(DpOverlap, ProjectedReduceGradsIsTheHandComputedExposure) {
  const Config c = tiny(true);
  const CostModel m(c, nullptr);
  const Projection p = project(c, nullptr);
  const TimelineEvent* last = nullptr;
  const TimelineEvent* reduce = nullptr;
  for (const auto& e : p.timeline) {
    if (e.instr.op == Op::backward) last = &e;
    if (e.instr.op == Op::reduce_grads) reduce = &e;
  }
  ASSERT_NE(last, nullptr);
  ASSERT_NE(reduce, nullptr);
  EXPECT_DOUBLE_EQ(reduce->start_s, last->end_s);
  EXPECT_NEAR(reduce->end_s, hand_end(m, last->start_s, last->end_s), 1e-15);
  // Some of it was hidden: less than the whole reduction after the flush.
  const double whole = m.dp_reduce(0);
  EXPECT_LT(reduce->end_s - reduce->start_s, whole);
}

Config gpt3d(const std::string& schedule, int dp, bool overlap) {
  Config c;
  c.model = {16, 4096, 32, 2048, 51200, 0, 0.1};
  c.plan.precision = Precision::fp16;
  c.plan.recompute = Recompute::full;
  c.plan.schedule = schedule;
  c.plan.tp = 8, c.plan.pp = 2, c.plan.dp = dp, c.plan.micro_batch = 1, c.plan.global_batch = 8 * dp;
  c.plan.virtual_stages = schedule == "interleaved" ? 2 : 1;
  c.plan.overlap_grad_reduce = overlap;
  c.machine = load_machine("a100-80gb", default_machines_dir());
  return c;
}

TEST(DpOverlap, OverlapShortensTheIterationWithDataParallelism) {
  for (const std::string schedule : {"1f1b", "interleaved", "zb-h1"}) {
    const Projection on = project(gpt3d(schedule, 4, true), nullptr);
    const Projection off = project(gpt3d(schedule, 4, false), nullptr);
    EXPECT_LT(on.iteration_s, off.iteration_s) << schedule;
    EXPECT_LT(on.breakdown.dp_comm, off.breakdown.dp_comm) << schedule;
    EXPECT_GT(on.breakdown.dp_comm, 0) << schedule;
  }
}

TEST(DpOverlap, NothingChangesWithoutDataParallelism) {
  for (const std::string schedule : {"1f1b", "interleaved", "zb-h1"}) {
    const Projection on = project(gpt3d(schedule, 1, true), nullptr);
    const Projection off = project(gpt3d(schedule, 1, false), nullptr);
    EXPECT_EQ(on.iteration_s, off.iteration_s) << schedule;
    ASSERT_EQ(on.timeline.size(), off.timeline.size());
    for (std::size_t i = 0; i < on.timeline.size(); ++i) EXPECT_EQ(on.timeline[i].end_s, off.timeline[i].end_s);
  }
}

// The distributed optimizer gathers the fp32 weights after its step, and the
// iteration waits for all of it whether or not overlap_param_gather defers the wait.
TEST(DpOverlap, ParameterGatherIsChargedWholeEitherWay) {
  Config c = tiny(false);
  c.plan.dp_sharding = DpSharding::optimizer;
  const Topology topo{1, 1, 2, c.machine.gpus_per_node};
  const Placement dp = group_placement(topo, topo.dp_group(0));
  const CommModel comm(c.machine, nullptr);
  const double bytes = 4.0 * 112384;
  const CostModel m(c, nullptr);
  EXPECT_DOUBLE_EQ(m.param_gather(0), comm.all_gather(bytes, dp));
  EXPECT_DOUBLE_EQ(m.dp_reduce(0), comm.reduce_scatter(bytes, dp) + comm.all_gather(bytes, dp));
  for (const bool overlap : {false, true}) {
    c.plan.overlap_grad_reduce = overlap;
    c.plan.overlap_param_gather = true;
    const double deferred = project(c, nullptr).iteration_s;
    c.plan.overlap_param_gather = false;
    EXPECT_EQ(project(c, nullptr).iteration_s, deferred);
  }
}

TEST(DpOverlap, AblatedDataParallelCommunicationIsNone) {
  Config c = gpt3d("1f1b", 4, true);
  c.machine.mechanisms.data_parallel_comm = false;
  EXPECT_TRUE(CostModel(c, nullptr).dp_overlap().empty());
  const Projection p = project(c, nullptr);
  EXPECT_EQ(p.breakdown.dp_comm, 0.0);
}

}  // namespace
}  // namespace ptdp
