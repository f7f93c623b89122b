// NcclCommunicator in a world of one GPU (the test binary runs as one process):
// collectives are identities or copies, bytes are counted, unprepared peers are
// refused. Multi-GPU behaviour (below) needs mpirun with one GPU per rank.
#include <gtest/gtest.h>

#ifdef PTDP_HAVE_NCCL
#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/comm/nccl_communicator.h"
#include "core/comm/single_rank.h"
#include "tests/gpu/gpu_test.h"

// What a 2-GPU test (mpirun -np 2, one GPU each, MpiCommunicator host) must check:
// - all_reduce sum of rank-dependent integers stored as f32/bf16 (exact sums), max;
//   all_gather puts rank i's block at i·count; reduce_scatter gives rank i the sum
//   of block i; broadcast from root 1; all_reduce_host sum and max.
// - split(rank % 2, rank) of 4 ranks: groups of two whose all_reduce sums the pair only.
// - prepare_p2p({peer}) on both, then both isend first and irecv after (the 1F1B
//   steady state: opposite directions at once): no deadlock, data exact; several
//   messages in one direction arrive in program order; test() turns true only after
//   the peer's irecv; the compute stream, after wait(), reads the received data.
// - A rank that never posts its irecv: the sender's wait() ends the job (non-zero
//   exit, message naming rank, host and peer) within the timeout instead of hanging.

namespace ptdp {
namespace {

using gputest::DeviceBuffer;

constexpr double kTimeoutS = 60;

// One GPU, a blocking stream (ordered with the default-stream copies of DeviceBuffer).
class NcclWorldOfOne : public ::testing::Test {
 protected:
  void SetUp() override {
    PTDP_REQUIRE_GPU();
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
    comm_ = NcclCommunicator::create_world(std::make_unique<SingleRankCommunicator>(Device::cuda), stream_, kTimeoutS);
  }
  void TearDown() override {
    comm_.reset();  // before the stream it uses
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  // Exact values: small integers, representable in every type.
  static std::vector<float> ramp(std::size_t n) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i % 17) - 8);
    return v;
  }
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<NcclCommunicator> comm_;
};

TEST_F(NcclWorldOfOne, Identity) {
  EXPECT_EQ(comm_->rank(), 0);
  EXPECT_EQ(comm_->size(), 1);
  EXPECT_EQ(comm_->backend(), "nccl");
  EXPECT_EQ(NcclCommunicator::nccl_version().rfind("2.", 0), 0u) << NcclCommunicator::nccl_version();
}

TEST_F(NcclWorldOfOne, AllReduceOfOneRankIsIdentity) {
  const std::vector<float> x = ramp(1000);
  DeviceBuffer<float> buf(x);
  comm_->all_reduce(buf.get(), 1000, DType::f32, ReduceOp::sum);
  EXPECT_EQ(buf.download(), x);
  comm_->all_reduce(buf.get(), 1000, DType::f32, ReduceOp::max);
  EXPECT_EQ(buf.download(), x);
  DeviceBuffer<__nv_bfloat16> b16(gputest::to_type<__nv_bfloat16>(x));
  comm_->all_reduce(b16.get(), 1000, DType::bf16, ReduceOp::sum);
  EXPECT_EQ(gputest::to_floats(b16.download()), x);
}

TEST_F(NcclWorldOfOne, AllGatherAndReduceScatterOfOneRankCopy) {
  const std::vector<float> x = ramp(257);
  DeviceBuffer<float> send(x), gathered(257), scattered(257);  // recv buffers poisoned with NaN
  comm_->all_gather(send.get(), gathered.get(), 257, DType::f32);
  EXPECT_EQ(gathered.download(), x);
  comm_->reduce_scatter(send.get(), scattered.get(), 257, DType::f32, ReduceOp::sum);
  EXPECT_EQ(scattered.download(), x);
}

TEST_F(NcclWorldOfOne, BroadcastFromTheOnlyRankKeepsTheValues) {
  const std::vector<float> x = ramp(64);
  DeviceBuffer<__half> buf(gputest::to_type<__half>(x));
  comm_->broadcast(buf.get(), 64, DType::f16, 0);
  EXPECT_EQ(gputest::to_floats(buf.download()), x);
  EXPECT_THROW(comm_->broadcast(buf.get(), 64, DType::f16, 1), std::invalid_argument);
}

TEST_F(NcclWorldOfOne, AllReduceHostReturnsTheValue) {
  EXPECT_EQ(comm_->all_reduce_host(3.25, ReduceOp::sum), 3.25);
  EXPECT_EQ(comm_->all_reduce_host(-7.5, ReduceOp::max), -7.5);
  comm_->barrier();
}

TEST_F(NcclWorldOfOne, SplitGivesAGroupOfOne) {
  std::unique_ptr<Communicator> sub = comm_->split(0, 0);
  EXPECT_EQ(sub->rank(), 0);
  EXPECT_EQ(sub->size(), 1);
  EXPECT_EQ(sub->backend(), "nccl");
  const std::vector<std::int32_t> x = {1, -2, 3, 40000};
  DeviceBuffer<std::int32_t> buf(x);
  sub->all_reduce(buf.get(), 4, DType::i32, ReduceOp::sum);
  EXPECT_EQ(buf.download(), x);
  EXPECT_EQ(sub->all_reduce_host(2.5, ReduceOp::sum), 2.5);
}

TEST_F(NcclWorldOfOne, StatsCountPayloadBytes) {
  DeviceBuffer<float> a(100), b(100);
  comm_->all_reduce(a.get(), 10, DType::f32, ReduceOp::sum);            // 10·4
  comm_->all_gather(a.get(), b.get(), 10, DType::f32);                  // 10·4
  comm_->reduce_scatter(a.get(), b.get(), 10, DType::f32, ReduceOp::sum);  // 10·size()·4
  comm_->broadcast(a.get(), 10, DType::bf16, 0);                        // 10·2
  comm_->all_reduce(a.get(), 5, DType::f64, ReduceOp::max);             // 5·8
  comm_->all_reduce_host(1.0, ReduceOp::sum);                           // not counted, as in MPI
  comm_->barrier();                                                     // not counted
  EXPECT_EQ(comm_->stats().bytes, 40 + 40 + 40 + 20 + 40);
  EXPECT_EQ(comm_->stats().calls, 5);
}

TEST_F(NcclWorldOfOne, PointToPointNeedsPreparedPeers) {
  DeviceBuffer<float> buf(8);
  try {
    comm_->isend(buf.get(), 8, DType::f32, 1, 0);
    ADD_FAILURE() << "isend to an unprepared peer did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(comm_->irecv(buf.get(), 8, DType::f32, 1, 0), std::logic_error);
  EXPECT_THROW(comm_->prepare_p2p({0}), std::invalid_argument);  // oneself
  EXPECT_THROW(comm_->prepare_p2p({1}), std::invalid_argument);  // outside the group
  comm_->prepare_p2p({});                                         // nothing to prepare
  EXPECT_EQ(comm_->stats().calls, 0);
}

// A group with nothing in it ends at once (non-blocking communicators answer
// ncclInProgress or success) and leaves the communicator usable; an unmatched
// group_end is refused.
TEST_F(NcclWorldOfOne, EmptyGroupEndsAndTheCommunicatorStaysUsable) {
  comm_->group_start();
  comm_->group_end();
  EXPECT_THROW(comm_->group_end(), std::logic_error);
  EXPECT_EQ(comm_->all_reduce_host(5.0, ReduceOp::sum), 5.0);
}

}  // namespace
}  // namespace ptdp

#else
TEST(NcclCommunicator, NotBuilt) { GTEST_SKIP() << "ptdp built without NCCL: NCCL communicator tests skipped"; }
#endif
