// What a device allocator does when the device is out of memory, kept apart
// from CUDA so it is tested on the CPU: give cached memory back once and retry,
// then fail with a message naming the rank, the request and the peak.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace ptdp {

// A device memory pool's state when an allocation failed (bytes; -1 = unknown).
struct PoolUsage {
  std::int64_t live = 0;           // held by tensors now
  std::int64_t live_peak = 0;      // highest held by tensors
  std::int64_t reserved = 0;       // obtained from the device by the pool (tensors + cache)
  std::int64_t reserved_peak = 0;  // highest reserved
  std::int64_t device_free = -1, device_total = -1;  // cudaMemGetInfo
};

// "rank R: out of GPU memory allocating N bytes (tensors live L, peak P; pool
// reserved X, peak Y; device free F of T)".
std::string device_oom_message(int rank, std::size_t request, const PoolUsage& usage);

// allocate() returns a pointer or nullptr when the device is out of memory.
// On nullptr, trim() gives the cache back once and allocate() is retried;
// nullptr again is returned to the caller, which throws OutOfMemory.
template <class Allocate, class Trim>
void* allocate_or_trim_once(Allocate&& allocate, Trim&& trim) {
  if (void* p = allocate()) return p;
  trim();
  return allocate();
}

}  // namespace ptdp
