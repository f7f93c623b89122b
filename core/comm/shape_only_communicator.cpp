// The shape-only stand-in group: copies this rank's block, drops sends, zeros receives.
#include "core/comm/shape_only_communicator.h"

#include <cstring>
#include <stdexcept>

namespace ptdp {

ShapeOnlyCommunicator::ShapeOnlyCommunicator(int rank, int size, Device device, Clear clear)
    : rank_(rank), size_(size), device_(device), clear_(std::move(clear)) {
  if (size < 1 || rank < 0 || rank >= size)
    throw std::invalid_argument("shape-only communicator: rank " + std::to_string(rank) + " of a group of " +
                                std::to_string(size));
  if (!clear_ && device_ == Device::cpu) clear_ = host_clear();
}

ShapeOnlyCommunicator::Clear ShapeOnlyCommunicator::host_clear() {
  return [](void* buf, std::size_t bytes) { std::memset(buf, 0, bytes); };
}

void ShapeOnlyCommunicator::check_peer(int peer, const char* op) const {
  if (peer < 0 || peer >= size_ || peer == rank_)
    throw std::logic_error(std::string("shape-only communicator: ") + op + " with rank " + std::to_string(peer) +
                           " from rank " + std::to_string(rank_) + " of " + std::to_string(size_));
}

void ShapeOnlyCommunicator::copy_block(const void* src, void* dst, std::int64_t count, DType type) const {
  if (device_ == Device::cpu && src != dst) std::memcpy(dst, src, static_cast<std::size_t>(count) * dtype_size(type));
}

// recv (size·count): this rank's block is `send`; the others keep what they held.
void ShapeOnlyCommunicator::all_gather(const void* send, void* recv, std::int64_t count, DType type) {
  auto* block = static_cast<char*>(recv) + static_cast<std::size_t>(rank_ * count) * dtype_size(type);
  copy_block(send, block, count, type);
}

// send (size·count): recv gets this rank's block, unreduced.
void ShapeOnlyCommunicator::reduce_scatter(const void* send, void* recv, std::int64_t count, DType type, ReduceOp) {
  const auto* block = static_cast<const char*>(send) + static_cast<std::size_t>(rank_ * count) * dtype_size(type);
  copy_block(block, recv, count, type);
}

std::unique_ptr<Request> ShapeOnlyCommunicator::isend(const void*, std::int64_t, DType, int peer, int) {
  check_peer(peer, "send");
  return std::make_unique<CompletedRequest>();
}

std::unique_ptr<Request> ShapeOnlyCommunicator::irecv(void* buf, std::int64_t count, DType type, int peer, int) {
  check_peer(peer, "receive");
  if (clear_) clear_(buf, static_cast<std::size_t>(count) * dtype_size(type));
  return std::make_unique<CompletedRequest>();
}

std::unique_ptr<Communicator> ShapeOnlyCommunicator::split(int, int) {
  return std::make_unique<ShapeOnlyCommunicator>(0, 1, device_, clear_);
}

void ShapeOnlyCommunicator::abort(const std::string& why) { throw std::runtime_error(why); }

}  // namespace ptdp
