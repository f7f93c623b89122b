// The caching device allocator.
#include "core/kernels/cuda/cuda_allocator.h"

#include <cuda_runtime.h>

#include <sstream>

#include "core/kernels/cuda/cuda_check.h"

namespace ptdp {

CudaCachingAllocator::CudaCachingAllocator(int rank) : rank_(rank) {}

CudaCachingAllocator::~CudaCachingAllocator() { release_cache(); }

std::size_t CudaCachingAllocator::rounded(std::size_t bytes) {
  constexpr std::size_t kSmall = 512, kLarge = 2 << 20, kLimit = 1 << 20;
  if (bytes == 0) return kSmall;
  const std::size_t unit = bytes < kLimit ? kSmall : kLarge;
  return (bytes + unit - 1) / unit * unit;
}

void* CudaCachingAllocator::device_malloc(std::size_t bytes) {
  void* ptr = nullptr;
  cudaError_t e = cudaMalloc(&ptr, bytes);
  if (e == cudaErrorMemoryAllocation) {  // give the cache back and try once more
    cudaGetLastError();
    release_cache();
    e = cudaMalloc(&ptr, bytes);
  }
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    std::ostringstream msg;
    msg << cuda::where() << ": out of GPU memory allocating " << bytes << " bytes (tensors live "
        << stats().live_bytes << ", peak " << stats().peak_bytes << "; device free " << free_bytes << " of " << total
        << ")";
    throw OutOfMemory(msg.str());
  }
  PTDP_CUDA_CHECK(e);
  reserved_ += static_cast<std::int64_t>(bytes);
  return ptr;
}

void* CudaCachingAllocator::allocate(std::size_t bytes) {
  const std::size_t size = rounded(bytes);
  void* ptr = nullptr;
  auto it = free_.find(size);
  if (it != free_.end() && !it->second.empty()) {
    ptr = it->second.back();
    it->second.pop_back();
  } else {
    ptr = device_malloc(size);
  }
  const std::int64_t peak = stats().peak_bytes;
  record_allocate(bytes);
  if (stats().peak_bytes > peak) {
    std::size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess)
      device_used_at_peak_ = static_cast<std::int64_t>(total - free_bytes);
  }
  return ptr;
}

void CudaCachingAllocator::deallocate(void* ptr, std::size_t bytes) {
  // Work queued on the compute stream may still use the block; reusing it for
  // later work on the same stream is safe (stream order), as in PyTorch.
  free_[rounded(bytes)].push_back(ptr);
  record_deallocate(bytes);
}

void CudaCachingAllocator::release_cache() {
  cudaDeviceSynchronize();
  for (auto& [size, blocks] : free_) {
    for (void* p : blocks) {
      cudaFree(p);
      reserved_ -= static_cast<std::int64_t>(size);
    }
    blocks.clear();
  }
}

}  // namespace ptdp
