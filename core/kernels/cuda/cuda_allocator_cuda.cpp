// The stream-ordered pool allocator of the CUDA backend.
#include "core/kernels/cuda/cuda_allocator.h"

#include <cstdio>
#include <stdexcept>

#include "core/io/poll_wait.h"
#include "core/kernels/cuda/cuda_check.h"

namespace ptdp {

CudaPoolAllocator::CudaPoolAllocator(int rank, double timeout_s) : rank_(rank), timeout_s_(timeout_s) {
  int device = 0;
  PTDP_CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  PTDP_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
  std::uint64_t keep_all = UINT64_MAX;  // never give freed memory back at a synchronisation
  PTDP_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep_all));
}

CudaPoolAllocator::~CudaPoolAllocator() {
  // Blocks still pending are released by the driver once their frees complete.
  cudaMemPoolDestroy(pool_);
}

std::int64_t CudaPoolAllocator::attribute(cudaMemPoolAttr attr) const {
  std::uint64_t value = 0;
  PTDP_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, attr, &value));
  return static_cast<std::int64_t>(value);
}

std::int64_t CudaPoolAllocator::reserved_bytes() const { return attribute(cudaMemPoolAttrReservedMemCurrent); }
std::int64_t CudaPoolAllocator::reserved_peak_bytes() const { return attribute(cudaMemPoolAttrReservedMemHigh); }
std::int64_t CudaPoolAllocator::used_peak_bytes() const { return attribute(cudaMemPoolAttrUsedMemHigh); }

PoolUsage CudaPoolAllocator::usage() const {
  PoolUsage u;
  u.live = stats().live_bytes;
  u.live_peak = stats().peak_bytes;
  u.reserved = reserved_bytes();
  u.reserved_peak = reserved_peak_bytes();
  std::size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess) {
    u.device_free = static_cast<std::int64_t>(free_bytes);
    u.device_total = static_cast<std::int64_t>(total);
  }
  (void)cudaGetLastError();
  return u;
}

void CudaPoolAllocator::trim() {
  const bool drained = poll_until(timeout_s_, [&](long) {
    const cudaError_t e = cudaStreamQuery(stream_);
    if (e == cudaErrorNotReady) {
      (void)cudaGetLastError();  // not an error: clear it so later checks do not see it
      return false;
    }
    PTDP_CUDA_CHECK(e);
    return true;
  });
  if (!drained)
    throw std::runtime_error(where(this_process()) + ": out of GPU memory, and the compute stream did not drain within " +
                             std::to_string(static_cast<int>(timeout_s_)) + " s to trim the memory pool");
  PTDP_CUDA_CHECK(cudaMemPoolTrimTo(pool_, 0));
}

void* CudaPoolAllocator::try_allocate(std::size_t bytes) {
  void* ptr = nullptr;
  const cudaError_t e = cudaMallocFromPoolAsync(&ptr, bytes == 0 ? 1 : bytes, pool_, stream_);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return nullptr;
  }
  PTDP_CUDA_CHECK(e);
  return ptr;
}

void* CudaPoolAllocator::allocate(std::size_t bytes) {
  void* ptr = allocate_or_trim_once([&] { return try_allocate(bytes); }, [&] { trim(); });
  if (ptr == nullptr) throw OutOfMemory(device_oom_message(rank_, bytes, usage()));
  const std::int64_t peak = stats().peak_bytes;
  record_allocate(bytes);
  if (stats().peak_bytes > peak) {
    std::size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess)
      device_used_at_peak_ = static_cast<std::int64_t>(total - free_bytes);
    else
      (void)cudaGetLastError();
  }
  return ptr;
}

void CudaPoolAllocator::deallocate(void* ptr, std::size_t bytes) {
  // Work queued on the stream may still use the block: the free is ordered
  // after it, and later allocations on the same stream may reuse the memory.
  // Called from tensor destructors, so a failure is reported, not thrown.
  const cudaError_t e = cudaFreeAsync(ptr, stream_);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: cudaFreeAsync failed: %s\n", where(this_process()).c_str(), cudaGetErrorString(e));
    (void)cudaGetLastError();
  }
  record_deallocate(bytes);
}

}  // namespace ptdp
