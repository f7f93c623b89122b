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

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCacheBlocks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kCacheBlocks = false;
#else
constexpr bool kCacheBlocks = true;
#endif
#else
constexpr bool kCacheBlocks = true;
#endif

std::size_t rounded_size(std::size_t bytes) { return (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64; }

}  // namespace

CpuAllocator::~CpuAllocator() { release_cache(); }

bool CpuAllocator::caches_blocks() { return kCacheBlocks; }

void CpuAllocator::release_cache() {
  for (auto& [size, ptr] : cache_) std::free(ptr);
  cache_.clear();
  cached_bytes_ = 0;
}

void* CpuAllocator::allocate(std::size_t bytes) {
  const std::size_t rounded = rounded_size(bytes);
  const auto wanted = stats().live_bytes + static_cast<std::int64_t>(bytes);
  void* ptr = nullptr;
  if (limit_bytes_ <= 0 || wanted <= limit_bytes_) {
    if (const auto hit = cache_.find(rounded); hit != cache_.end()) {
      ptr = hit->second;
      cache_.erase(hit);
      cached_bytes_ -= static_cast<std::int64_t>(rounded);
    } else {
      if (cached_bytes_ > stats().live_bytes) release_cache();  // another pattern of sizes: start over
      ptr = std::aligned_alloc(64, rounded);
      if (ptr == nullptr && cached_bytes_ > 0) {  // what the cache holds may be what is missing
        release_cache();
        ptr = std::aligned_alloc(64, rounded);
      }
    }
  }
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
  record_deallocate(bytes);
  if (!kCacheBlocks || ptr == nullptr) return std::free(ptr);
  const std::size_t rounded = rounded_size(bytes);
  cache_.emplace(rounded, ptr);
  cached_bytes_ += static_cast<std::int64_t>(rounded);
}

}  // namespace ptdp
