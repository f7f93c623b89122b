// Live/peak accounting shared by all allocators, and the host allocator.
#include "core/tensor/allocator.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace ptdp {

void Allocator::record_allocate(std::size_t bytes) {
  stats_.live_bytes += static_cast<std::int64_t>(bytes);
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.live_bytes);
  ++stats_.allocations;
}

void Allocator::record_deallocate(std::size_t bytes) {
  stats_.live_bytes -= static_cast<std::int64_t>(bytes);
}

void* CpuAllocator::allocate(std::size_t bytes) {
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64;
  const auto wanted = stats().live_bytes + static_cast<std::int64_t>(bytes);
  void* ptr = nullptr;
  if (limit_bytes_ <= 0 || wanted <= limit_bytes_) ptr = std::aligned_alloc(64, rounded);
  if (ptr == nullptr) {
    std::ostringstream msg;
    msg << "rank " << rank_ << ": out of host memory allocating " << bytes
        << " bytes (live " << stats().live_bytes << ", peak " << stats().peak_bytes;
    if (limit_bytes_ > 0) msg << ", limit " << limit_bytes_;
    msg << ")";
    throw OutOfMemory(msg.str());
  }
  record_allocate(bytes);
  return ptr;
}

void CpuAllocator::deallocate(void* ptr, std::size_t bytes) {
  std::free(ptr);
  record_deallocate(bytes);
}

}  // namespace ptdp
