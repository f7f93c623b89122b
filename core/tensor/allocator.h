// Allocators with live and peak byte accounting. Every tensor's storage comes
// from one, so a run can report the memory it really held at its peak.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "core/tensor/dtype.h"

namespace ptdp {

struct MemoryStats {
  std::int64_t live_bytes = 0;   // bytes held by tensors now
  std::int64_t peak_bytes = 0;   // highest live_bytes since construction or reset_peak()
  std::int64_t allocations = 0;  // number of allocate() calls
};

// Thrown when an allocation would exceed the device's memory; names the rank,
// the request and the peak so a user sees which plan did not fit.
class OutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* ptr, std::size_t bytes) = 0;
  virtual Device device() const = 0;

  const MemoryStats& stats() const { return stats_; }
  void reset_peak() { stats_.peak_bytes = stats_.live_bytes; }

 protected:
  void record_allocate(std::size_t bytes);
  void record_deallocate(std::size_t bytes);

 private:
  MemoryStats stats_;
};

// Host memory, 64-byte aligned. Freed blocks are kept by size and handed out
// again: training asks for the same sizes every micro-batch, and returning them
// to the C library let it give the heap's top back to the kernel, so each
// micro-batch paid page faults and page clearing for its activations (about
// 190 faults a micro-batch on the closure config). The cache never holds more
// than was live at once: a request it cannot serve while it holds more than is
// live empties it first. A sanitizer build frees at once, so ASan sees a use
// after free. `limit_bytes` > 0 makes allocations beyond it throw OutOfMemory
// (used to test the out-of-memory path); `rank` names the owner.
class CpuAllocator final : public Allocator {
 public:
  explicit CpuAllocator(int rank = 0, std::int64_t limit_bytes = 0)
      : rank_(rank), limit_bytes_(limit_bytes) {}
  ~CpuAllocator() override;
  CpuAllocator(const CpuAllocator&) = delete;
  CpuAllocator& operator=(const CpuAllocator&) = delete;
  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr, std::size_t bytes) override;
  Device device() const override { return Device::cpu; }
  std::int64_t cached_bytes() const { return cached_bytes_; }
  static bool caches_blocks();  // false in an AddressSanitizer build

 private:
  void release_cache();

  int rank_;
  std::int64_t limit_bytes_;
  std::unordered_multimap<std::size_t, void*> cache_;  // rounded size -> freed block
  std::int64_t cached_bytes_ = 0;
};

}  // namespace ptdp
