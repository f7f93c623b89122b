// Several ranks' instruction lists in one process: each rank is a thread with
// its own CPU ops, over an in-process communicator (host copies). A pipeline of
// p = 2 (1F1B, GPipe, interleaved; with t = 2 also scatter/gather) runs its
// grouped transfer steps and must reproduce the single-rank losses, as the MPI
// equivalence test does across processes.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>

#include "core/comm/in_process_communicator.h"
#ifdef PTDP_HAVE_CUDA
#include "core/comm/in_process_device.h"
#endif
#include "core/kernels/cpu/cpu_ops.h"
#include "core/schedule/deadlock.h"
#include "core/schedule/registry.h"
#include "tests/equivalence_config.h"
#include "tests/pipeline_pair_util.h"

namespace ptdp {
namespace {

constexpr int kIterations = 3;
constexpr double kPairTimeoutS = 120;  // a rank stuck on its peer fails the test instead of hanging it

std::vector<double> run_ranks(const Config& cfg, InProcessLog* log = nullptr) {
  auto world = make_in_process_world(test::plan_topology(cfg).world(), kPairTimeoutS, log);
  return test::run_rank_threads(world, [&](int r, Communicator& comm) {
    CpuAllocator alloc(r);
    CpuOps ops(alloc);
    return test::train_rank(cfg, ops, comm, kIterations);
  });
}

// The single-rank run: a world of one thread.
const std::vector<double>& reference() {
  static const std::vector<double> ref = run_ranks(test::equivalence_config());
  return ref;
}

struct PairCase {
  const char* schedule;
  int v, t;
  bool scatter_gather;
};

void PrintTo(const PairCase& c, std::ostream* os) {
  *os << c.schedule << " v=" << c.v << " t=" << c.t << (c.scatter_gather ? " scatter/gather" : "");
}

class PipelinePair : public testing::TestWithParam<PairCase> {};

TEST_P(PipelinePair, ReproducesTheSingleRankLosses) {
  const PairCase& c = GetParam();
  Config cfg = test::equivalence_config();
  cfg.plan.pp = 2;
  cfg.plan.tp = c.t;
  cfg.plan.virtual_stages = c.v;
  cfg.plan.schedule = c.schedule;
  cfg.plan.scatter_gather = c.scatter_gather;
  ASSERT_TRUE(validate(cfg, c.t * 2).empty()) << validate(cfg, c.t * 2).front().message;
  InProcessLog log;
  const std::vector<double> losses = run_ranks(cfg, &log);
  ASSERT_EQ(losses.size(), reference().size());
  for (std::size_t i = 0; i < losses.size(); ++i)
    EXPECT_NEAR(losses[i], reference()[i], 1e-5 * std::abs(reference()[i])) << "iteration " << i;
  // Every transfer step of every rank is one group, unless the schedule's
  // steps do not pair up (interleaved's steady state): then none is.
  long steps = 0;
  const std::vector<Program> pipeline = build_pipeline(c.schedule, 2, cfg.plan.micro_batches(), c.v);
  for (const Program& prog : pipeline)
    for (std::size_t i = 0; i < prog.size(); ++i)
      if (transfer_step_end(prog, i) > i && (i == 0 || !is_transfer(prog[i - 1].op))) ++steps;
  const bool grouped = grouped_steps_deadlock(pipeline).empty();
  EXPECT_EQ(grouped, std::string(c.schedule) != "interleaved");
  EXPECT_EQ(log.groups.load(), grouped ? steps * c.t * kIterations : 0);
}

INSTANTIATE_TEST_SUITE_P(Schedules, PipelinePair,
                         testing::Values(PairCase{"1f1b", 1, 1, false}, PairCase{"gpipe", 1, 1, false},
                                         PairCase{"interleaved", 2, 1, false}, PairCase{"1f1b", 1, 2, true}),
                         [](const testing::TestParamInfo<PairCase>& p) {
                           return std::string(p.param.schedule) + "_v" + std::to_string(p.param.v) + "_t" +
                                  std::to_string(p.param.t) + (p.param.scatter_gather ? "_sg" : "");
                         });

// The in-process communicator can fail: a receive nobody sends gives up after
// its deadline instead of hanging.
TEST(InProcessCommunicator, UnansweredReceiveTimesOut) {
  auto world = make_in_process_world(2, 0.05);
  float x = 0;
  EXPECT_THROW(world[0]->irecv(&x, 1, DType::f32, 1, 7)->wait(), std::runtime_error);
}

TEST(InProcessCommunicator, GroupsArePairedAndHoldNoCollective) {
  auto world = make_in_process_world(1, 10);
  EXPECT_THROW(world[0]->group_end(), std::logic_error);
  world[0]->group_start();
  double x = 1;
  EXPECT_THROW(world[0]->all_reduce(&x, 1, DType::f64, ReduceOp::sum), std::logic_error);
  world[0]->group_end();
  EXPECT_EQ(world[0]->all_reduce_host(2.0, ReduceOp::sum), 2.0);
}

TEST(InProcessCommunicator, SendsMatchReceivesByTagInOrder) {
  auto world = make_in_process_world(2, 10);
  const float a = 1, b = 2, c = 3;
  world[0]->isend(&a, 1, DType::f32, 1, 5)->wait();
  world[0]->isend(&b, 1, DType::f32, 1, 6)->wait();
  world[0]->isend(&c, 1, DType::f32, 1, 5)->wait();
  float got[3] = {};
  world[1]->irecv(&got[0], 1, DType::f32, 0, 6)->wait();
  world[1]->irecv(&got[1], 1, DType::f32, 0, 5)->wait();
  world[1]->irecv(&got[2], 1, DType::f32, 0, 5)->wait();
  EXPECT_EQ(got[0], 2);
  EXPECT_EQ(got[1], 1);
  EXPECT_EQ(got[2], 3);
}

#ifdef PTDP_HAVE_CUDA
// The device mode's host side (no GPU touched): streams must be registered
// before point-to-point, host scalars and groups work as in host mode.
TEST(InProcessDeviceCommunicator, NeedsAStreamAndKeepsTheHostSide) {
  auto host = make_in_process_world(1, 10);
  EXPECT_THROW(set_in_process_stream(*host[0], nullptr), std::logic_error);
  InProcessLog log;
  auto world = make_in_process_device_world(2, 10, &log);
  float x = 0;
  EXPECT_THROW(world[0]->isend(&x, 1, DType::f32, 1, 0), std::logic_error);
  EXPECT_THROW(world[1]->irecv(&x, 1, DType::f32, 0, 0), std::logic_error);
  EXPECT_THROW(world[0]->isend(&x, 1, DType::f32, 0, 0), std::invalid_argument);  // to itself
  const auto sums = test::run_rank_threads(world, [](int r, Communicator& comm) {
    auto sub = comm.split(0, r);  // both ranks: a group of two with its own mailbox
    comm.group_start();
    comm.group_end();
    return std::vector<double>{sub->all_reduce_host(r + 1.0, ReduceOp::sum), static_cast<double>(sub->size())};
  });
  EXPECT_EQ(sums, (std::vector<double>{3.0, 2.0}));
  EXPECT_EQ(log.groups.load(), 2);
}
#endif

}  // namespace
}  // namespace ptdp
