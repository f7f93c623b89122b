// Device memory for the CUDA backend: stream-ordered allocation
// (cudaMallocFromPoolAsync / cudaFreeAsync) on the compute stream from a memory
// pool of this allocator's own whose release threshold is UINT64_MAX, so freed
// memory stays cached in the pool and is reused by later work on the stream
// (training allocates the same shapes every iteration). Live bytes are the
// tensors' (Allocator's accounting); reserved bytes and their peak are the
// pool's own attributes. Out of memory: the pool is trimmed once (after the
// stream drains, with a deadline) and the allocation retried, then a clean
// OutOfMemory names the rank, the request and the peak (device_oom.h).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/tensor/allocator.h"
#include "core/tensor/device_oom.h"

namespace ptdp {

class CudaPoolAllocator final : public Allocator {
 public:
  // A pool on the current device. `timeout_s` bounds the wait for the stream
  // before trimming the pool.
  explicit CudaPoolAllocator(int rank, double timeout_s = 60);
  ~CudaPoolAllocator() override;
  CudaPoolAllocator(const CudaPoolAllocator&) = delete;
  CudaPoolAllocator& operator=(const CudaPoolAllocator&) = delete;

  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr, std::size_t bytes) override;
  Device device() const override { return Device::cuda; }

  // The stream allocations and frees are ordered on: CudaOps's compute stream
  // (its constructor sets it, its destructor sets it back to null = the legacy
  // default stream, after draining its own). One CudaOps per allocator is the
  // intended use; with several (benchmark variants), the last one constructed
  // orders them, and work on the others must be synchronised between uses.
  void set_stream(cudaStream_t stream) { stream_ = stream; }
  cudaStream_t stream() const { return stream_; }

  // Bytes the pool holds from the device (tensors + cache), and its peak.
  std::int64_t reserved_bytes() const;
  std::int64_t reserved_peak_bytes() const;
  // Highest bytes handed out by the pool (tensors, rounded up by the pool).
  std::int64_t used_peak_bytes() const;
  // Device memory in use (total − free, cudaMemGetInfo) when the tensor peak was last raised.
  std::int64_t device_used_at_peak() const { return device_used_at_peak_; }
  // Waits for the stream (at most timeout_s, else throws) and gives the pool's
  // unused memory back to the device.
  void trim();

 private:
  void* try_allocate(std::size_t bytes);  // nullptr when the device is out of memory
  std::int64_t attribute(cudaMemPoolAttr attr) const;
  PoolUsage usage() const;

  int rank_;
  double timeout_s_;
  cudaMemPool_t pool_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::int64_t device_used_at_peak_ = 0;
};

}  // namespace ptdp
