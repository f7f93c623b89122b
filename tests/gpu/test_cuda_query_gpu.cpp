// cuda_query.h on a real stream: an event held back by a slow host function
// reads "not ready", and afterwards the last-error slot is clear, so the next
// launch check does not report "device not ready"; then it reads ready.
#include <gtest/gtest.h>

#ifdef PTDP_HAVE_CUDA
#include <cuda_runtime.h>

#include <chrono>
#include <thread>

#include "core/io/poll_wait.h"
#include "core/kernels/cuda/cuda_query.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

void CUDART_CB sleep_100ms(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }

TEST(CudaQueryGpu, NotReadyLeavesNoErrorBehind) {
  PTDP_REQUIRE_GPU();
  cudaStream_t stream = nullptr;
  cudaEvent_t event = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaLaunchHostFunc(stream, sleep_100ms, nullptr), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(event, stream), cudaSuccess);
  EXPECT_EQ(cuda::read_event(event).state, QueryState::not_ready);
  EXPECT_EQ(cuda::read_stream(stream).state, QueryState::not_ready);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "a not-ready query must not leave an error for the next check";
  EXPECT_TRUE(poll_until(10.0, [&](long) { return cuda::read_event(event).state == QueryState::ready; }));
  EXPECT_EQ(cuda::read_stream(stream).state, QueryState::ready);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cudaEventDestroy(event);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace ptdp

#else
TEST(CudaQueryGpu, NotBuilt) { GTEST_SKIP() << "ptdp built without CUDA: CUDA query tests skipped"; }
#endif
