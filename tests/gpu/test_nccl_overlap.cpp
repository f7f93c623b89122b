// NcclCommunicator::all_reduce_overlapped in a world of one GPU: the all-reduce
// runs on the reduce stream after the compute stream's earlier kernels and
// before its later ones (scale by 2, all-reduce, scale by 3 gives 6·x exactly),
// test() turns true, bytes are counted, non-fp32/fp64 types take the ordered path.
// With two GPUs (mpirun -np 2) it must also sum rank-dependent integers exactly
// while the compute stream runs other kernels.
#include <gtest/gtest.h>

#ifdef PTDP_HAVE_NCCL
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "core/comm/nccl_communicator.h"
#include "core/comm/single_rank.h"
#include "core/kernels/cuda/kernels.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;

TEST(NcclOverlap, OrderedBetweenComputeKernelsInAWorldOfOne) {
  PTDP_REQUIRE_GPU();
  cudaStream_t compute = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking), cudaSuccess);
  {
    auto comm = NcclCommunicator::create_world(std::make_unique<SingleRankCommunicator>(Device::cuda), compute, 60);
    std::vector<float> x(100003);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 13) - 6);
    DeviceBuffer<float> buf(x);  // synchronous upload: done before the compute stream starts
    const std::int64_t bytes_before = comm->stats().bytes;
    cuda::scale(buf.get(), static_cast<std::int64_t>(x.size()), 2.0f, compute);
    auto request = comm->all_reduce_overlapped(buf.get(), static_cast<std::int64_t>(x.size()), DType::f32, ReduceOp::sum);
    request->wait();
    cuda::scale(buf.get(), static_cast<std::int64_t>(x.size()), 3.0f, compute);
    ASSERT_EQ(cudaStreamSynchronize(compute), cudaSuccess);
    EXPECT_TRUE(request->test());
    const auto got = buf.download();
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], 6.0f * x[i]) << "element " << i;
    EXPECT_EQ(comm->stats().bytes - bytes_before, static_cast<std::int64_t>(x.size() * sizeof(float)));

    DeviceBuffer<__half> half(gputest::to_type<__half>(std::vector<float>(64, 1.5f)));
    comm->all_reduce_overlapped(half.get(), 64, DType::f16, ReduceOp::sum)->wait();
    ASSERT_EQ(cudaStreamSynchronize(compute), cudaSuccess);
    EXPECT_EQ(gputest::to_floats(half.download()), std::vector<float>(64, 1.5f));
  }
  cudaStreamDestroy(compute);
}

}  // namespace
}  // namespace ptdp

#else
TEST(NcclOverlap, NotBuilt) { GTEST_SKIP() << "ptdp built without NCCL: overlapped all-reduce tests skipped"; }
#endif
