// The MPI communicator: every operation of the interface on the 8-rank world and
// on split groups, with exactly representable values so results compare exactly.
#include <gtest/gtest.h>

#include <numeric>

#include "core/comm/process_groups.h"
#include "tests/mpi/mpi_env.h"

namespace ptdp {
namespace {

TEST(MpiCommunicator, AllReduceSumAndMax) {
  Communicator& w = test::mpi_world();
  const int n = w.size(), r = w.rank();
  std::vector<float> x = {static_cast<float>(r), 1.0f, static_cast<float>(-r)};
  w.all_reduce(x.data(), 3, DType::f32, ReduceOp::sum);
  EXPECT_EQ(x, (std::vector<float>{static_cast<float>(n * (n - 1) / 2), static_cast<float>(n),
                                   static_cast<float>(-n * (n - 1) / 2)}));
  std::vector<double> y = {static_cast<double>(r), static_cast<double>(-r)};
  w.all_reduce(y.data(), 2, DType::f64, ReduceOp::max);
  EXPECT_EQ(y, (std::vector<double>{static_cast<double>(n - 1), 0.0}));
  EXPECT_EQ(w.all_reduce_host(r, ReduceOp::sum), n * (n - 1) / 2);
}

TEST(MpiCommunicator, AllGatherReduceScatterBroadcast) {
  Communicator& w = test::mpi_world();
  const int n = w.size(), r = w.rank();
  const std::vector<float> mine = {static_cast<float>(r), static_cast<float>(10 * r)};
  std::vector<float> all(2 * static_cast<std::size_t>(n));
  w.all_gather(mine.data(), all.data(), 2, DType::f32);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(all[2 * i], static_cast<float>(i));
    EXPECT_EQ(all[2 * i + 1], static_cast<float>(10 * i));
  }
  std::vector<float> blocks(static_cast<std::size_t>(n));  // block i holds i + r
  for (int i = 0; i < n; ++i) blocks[static_cast<std::size_t>(i)] = static_cast<float>(i + r);
  float reduced = 0;
  w.reduce_scatter(blocks.data(), &reduced, 1, DType::f32, ReduceOp::sum);
  EXPECT_EQ(reduced, static_cast<float>(n * r + n * (n - 1) / 2));
  std::vector<std::int32_t> b = {r == 3 ? 42 : -1, r == 3 ? 7 : -1};
  w.broadcast(b.data(), 2, DType::i32, 3);
  EXPECT_EQ(b, (std::vector<std::int32_t>{42, 7}));
}

TEST(MpiCommunicator, PairedSendReceiveAroundARing) {
  Communicator& w = test::mpi_world();
  const int n = w.size(), r = w.rank();
  std::vector<float> out(100, static_cast<float>(r)), in(100, -1.0f);
  auto recv = w.irecv(in.data(), 100, DType::f32, (r + n - 1) % n, 5);
  auto send = w.isend(out.data(), 100, DType::f32, (r + 1) % n, 5);
  recv->wait();
  send->wait();
  EXPECT_EQ(in, std::vector<float>(100, static_cast<float>((r + n - 1) % n)));
}

TEST(MpiCommunicator, GroupsOfATopologyHaveTheirSizesAndRanks) {
  Communicator& w = test::mpi_world();
  ASSERT_EQ(w.size(), 8) << "run under mpirun -np 8";
  const Topology topo{2, 2, 2, 8};
  ProcessGroups g = make_process_groups(w, topo);
  EXPECT_EQ(g.tp->size(), 2);
  EXPECT_EQ(g.dp->size(), 2);
  EXPECT_EQ(g.pp->size(), 2);
  EXPECT_EQ(g.model_parallel->size(), 4);
  EXPECT_EQ(g.embedding->size(), 2);  // p = 2: first and last stage are every stage
  EXPECT_EQ(g.tp->rank(), g.coord.tp);
  EXPECT_EQ(g.dp->rank(), g.coord.dp);
  EXPECT_EQ(g.pp->rank(), g.coord.pp);
  // The sum of world ranks over each group identifies its members.
  const double tp_sum = g.tp->all_reduce_host(w.rank(), ReduceOp::sum);
  const auto tp_group = topo.tp_group(w.rank());
  EXPECT_EQ(tp_sum, std::accumulate(tp_group.begin(), tp_group.end(), 0));
  const double pp_sum = g.pp->all_reduce_host(w.rank(), ReduceOp::sum);
  const auto pp_group = topo.pp_group(w.rank());
  EXPECT_EQ(pp_sum, std::accumulate(pp_group.begin(), pp_group.end(), 0));
  std::vector<float> x(10, 1.0f);
  const auto before = g.dp->stats().bytes;
  g.dp->all_reduce(x.data(), 10, DType::f32, ReduceOp::sum);
  EXPECT_EQ(g.dp->stats().bytes - before, 40);
  EXPECT_EQ(x[0], 2.0f);
}

}  // namespace
}  // namespace ptdp
