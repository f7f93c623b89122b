// The stream-ordered pool allocator on a GPU: freed memory stays reserved and is
// reused, the pool's attributes report it, an impossible request ends in a
// clean OutOfMemory (rank, request, peak) that leaves the device usable.
// Skipped without a GPU.
#include "core/kernels/cuda/cuda_ops.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

TEST(CudaPoolAllocator, FreedMemoryStaysReservedAndIsReused) {
  PTDP_REQUIRE_GPU();
  CudaPoolAllocator alloc(0);
  CudaOps ops(alloc, {DType::bf16, true, Attention::flash, 60});
  EXPECT_EQ(alloc.stream(), ops.stream());
  const std::size_t bytes = 64u << 20;
  void* a = alloc.allocate(bytes);
  EXPECT_EQ(alloc.stats().live_bytes, static_cast<std::int64_t>(bytes));
  EXPECT_GE(alloc.reserved_bytes(), static_cast<std::int64_t>(bytes));
  alloc.deallocate(a, bytes);
  ops.synchronize();
  const std::int64_t reserved = alloc.reserved_bytes();
  EXPECT_GE(reserved, static_cast<std::int64_t>(bytes));  // release threshold UINT64_MAX: kept after a sync
  void* b = alloc.allocate(bytes);
  EXPECT_EQ(alloc.reserved_bytes(), reserved);  // served from the pool, nothing new from the device
  EXPECT_GE(alloc.reserved_peak_bytes(), reserved);
  EXPECT_GE(alloc.used_peak_bytes(), static_cast<std::int64_t>(bytes));
  alloc.deallocate(b, bytes);
  alloc.trim();
  EXPECT_LT(alloc.reserved_bytes(), reserved);  // trimming gives it back
  EXPECT_EQ(alloc.stats().live_bytes, 0);
}

TEST(CudaPoolAllocator, AnImpossibleRequestIsACleanOutOfMemory) {
  PTDP_REQUIRE_GPU();
  CudaPoolAllocator alloc(5);
  CudaOps ops(alloc, {DType::bf16, true, Attention::flash, 60});
  const std::size_t huge = std::size_t{1} << 50;  // 1 PiB
  try {
    alloc.allocate(huge);
    ADD_FAILURE() << "1 PiB was allocated";
  } catch (const OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("rank 5"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(huge)), std::string::npos) << m;
    EXPECT_NE(m.find("peak"), std::string::npos) << m;
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // the failure was cleared
  Tensor t = ops.zeros({1024});                // and the device still works
  ops.synchronize();
}

}  // namespace
}  // namespace ptdp
