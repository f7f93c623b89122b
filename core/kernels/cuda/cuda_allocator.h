// Device memory for the CUDA backend: a caching allocator (freed blocks are
// kept by size class and reused, as training allocates the same shapes every
// iteration) with live and peak bytes of tensors, and the device's own view
// (cudaMemGetInfo) taken when the peak is reached. Out of memory is a clean
// OutOfMemory error naming the rank, the request and the peak.
#pragma once
#include <cstddef>
#include <map>
#include <vector>

#include "core/tensor/allocator.h"

namespace ptdp {

class CudaCachingAllocator final : public Allocator {
 public:
  explicit CudaCachingAllocator(int rank);
  ~CudaCachingAllocator() override;

  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr, std::size_t bytes) override;
  Device device() const override { return Device::cuda; }

  // Bytes obtained from cudaMalloc (held by tensors or cached).
  std::int64_t reserved_bytes() const { return reserved_; }
  // Device memory in use (total − free, cudaMemGetInfo) when the tensor peak was last raised.
  std::int64_t device_used_at_peak() const { return device_used_at_peak_; }
  // Returns cached blocks to the device.
  void release_cache();

  // Size classes: 512-byte rounding below 1 MiB, 2 MiB rounding above.
  static std::size_t rounded(std::size_t bytes);

 private:
  void* device_malloc(std::size_t bytes);
  int rank_;
  std::map<std::size_t, std::vector<void*>> free_;  // size class -> cached blocks
  std::int64_t reserved_ = 0;
  std::int64_t device_used_at_peak_ = 0;
};

}  // namespace ptdp
