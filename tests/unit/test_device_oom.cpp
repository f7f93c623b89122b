// The device allocators' out-of-memory policy without a GPU: the pool is
// trimmed exactly once and the allocation retried, and the message names the
// rank, the request and the peaks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/tensor/device_oom.h"

namespace ptdp {
namespace {

// A fake device: allocate() fails while `free` < the request; trim() frees the cache.
struct FakeDevice {
  std::int64_t free = 0, cached = 0;
  int allocations = 0, trims = 0;
  char block = 0;
  void* allocate(std::int64_t bytes) {
    ++allocations;
    if (bytes > free) return nullptr;
    free -= bytes;
    return &block;
  }
  void trim() {
    ++trims;
    free += cached;
    cached = 0;
  }
};

void* run(FakeDevice& d, std::int64_t bytes) {
  return allocate_or_trim_once([&] { return d.allocate(bytes); }, [&] { d.trim(); });
}

TEST(DeviceOom, AnAllocationThatFitsNeverTrims) {
  FakeDevice d{100, 50};
  EXPECT_NE(run(d, 80), nullptr);
  EXPECT_EQ(d.trims, 0);
  EXPECT_EQ(d.allocations, 1);
  EXPECT_EQ(d.cached, 50);  // the cache is kept
}

TEST(DeviceOom, TrimsOnceAndRetriesWhenTheCacheMakesItFit) {
  FakeDevice d{10, 90};
  EXPECT_NE(run(d, 80), nullptr);
  EXPECT_EQ(d.trims, 1);
  EXPECT_EQ(d.allocations, 2);
}

TEST(DeviceOom, GivesUpAfterOneTrim) {
  FakeDevice d{10, 20};
  EXPECT_EQ(run(d, 80), nullptr);
  EXPECT_EQ(d.trims, 1);
  EXPECT_EQ(d.allocations, 2);
}

TEST(DeviceOom, TheMessageNamesRankRequestAndPeaks) {
  PoolUsage u;
  u.live = 1000, u.live_peak = 3000, u.reserved = 4096, u.reserved_peak = 8192;
  u.device_free = 12, u.device_total = 80000;
  const std::string m = device_oom_message(3, 123456, u);
  EXPECT_EQ(m, "rank 3: out of GPU memory allocating 123456 bytes (tensors live 1000, peak 3000; pool reserved 4096, "
               "peak 8192; device free 12 of 80000)");
  u.device_total = -1;  // cudaMemGetInfo failed: no device part
  EXPECT_EQ(device_oom_message(0, 5, u).find("device free"), std::string::npos);
}

}  // namespace
}  // namespace ptdp
