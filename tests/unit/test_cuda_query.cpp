// The query reading of core/kernels/cuda/cuda_query.h, driven by fake queries:
// "not ready" is popped from the last-error slot exactly when a query returns
// it, a real error is reported with the place, and a stale launch error found
// in the slot is not dropped. Needs only the CUDA headers (no runtime call).
#ifdef PTDP_HAVE_CUDA
#include <gtest/gtest.h>

#include <vector>

#include "core/kernels/cuda/cuda_query.h"

namespace ptdp {
namespace {

// Answers a scripted sequence of query results; counts the pops of the slot.
struct FakeRuntime {
  std::vector<cudaError_t> answers;
  cudaError_t slot = cudaSuccess;  // what the last-error slot holds besides NotReady
  std::size_t next = 0;
  int pops = 0;
  cudaError_t query() {
    const cudaError_t e = answers.at(next++);
    if (e == cudaErrorNotReady && slot == cudaSuccess) slot = e;  // the runtime keeps NotReady there
    return e;
  }
  cudaError_t pop() {
    ++pops;
    const cudaError_t e = slot;
    slot = cudaSuccess;
    return e;
  }
};

std::string fake_describe(cudaError_t e) { return "error " + std::to_string(static_cast<int>(e)); }

TEST(CudaQuery, PopsTheSlotExactlyForEachNotReady) {
  FakeRuntime rt{{cudaErrorNotReady, cudaErrorNotReady, cudaSuccess}};
  int polls = 0;
  while (!query_ready([&] { return rt.query(); }, [&] { return rt.pop(); }, fake_describe, "wait")) {
    EXPECT_EQ(rt.pops, polls + 1) << "one pop per NotReady answer";
    EXPECT_EQ(rt.slot, cudaSuccess) << "the slot is clear after each NotReady";
    ++polls;
  }
  EXPECT_EQ(polls, 2);
  EXPECT_EQ(rt.pops, 2) << "a ready answer pops nothing";
}

TEST(CudaQuery, ReadyAtOnceNeverPops) {
  FakeRuntime rt{{cudaSuccess}};
  const QueryResult r = read_query([&] { return rt.query(); }, [&] { return rt.pop(); });
  EXPECT_EQ(r.state, QueryState::ready);
  EXPECT_EQ(rt.pops, 0);
}

TEST(CudaQuery, RealErrorIsReportedWithThePlaceAndNotPopped) {
  FakeRuntime rt{{cudaErrorNotReady, cudaErrorLaunchFailure}};
  const auto ready = [&] {
    return query_ready([&] { return rt.query(); }, [&] { return rt.pop(); }, fake_describe,
                       "rank 3 (node7): synchronize");
  };
  EXPECT_FALSE(ready());
  try {
    ready();
    FAIL() << "a launch failure must throw";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 3 (node7): synchronize"), std::string::npos) << what;
    EXPECT_NE(what.find(fake_describe(cudaErrorLaunchFailure)), std::string::npos) << what;
  }
  EXPECT_EQ(rt.pops, 1) << "only the NotReady answer pops the slot";
}

TEST(CudaQuery, StaleLaunchErrorInTheSlotIsReportedNotDropped) {
  FakeRuntime rt{{cudaErrorNotReady}};
  rt.slot = cudaErrorInvalidConfiguration;  // an unchecked launch failed earlier
  const QueryResult r = read_query([&] { return rt.query(); }, [&] { return rt.pop(); });
  EXPECT_EQ(r.state, QueryState::failed);
  EXPECT_EQ(r.error, cudaErrorInvalidConfiguration);
}

}  // namespace
}  // namespace ptdp
#endif  // PTDP_HAVE_CUDA
