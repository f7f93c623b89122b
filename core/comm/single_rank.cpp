// Single-rank communicator: a world of one.
#include "core/comm/single_rank.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace ptdp {

void SingleRankCommunicator::copy(const void* src, void* dst, std::int64_t count, DType type) {
  if (src == dst) return;
  if (device_ != Device::cpu)
    throw std::logic_error("single-rank communicator: device copies go through the backend's ops");
  std::memcpy(dst, src, static_cast<std::size_t>(count) * dtype_size(type));
}

void SingleRankCommunicator::all_gather(const void* send, void* recv, std::int64_t count, DType type) {
  copy(send, recv, count, type);
}

void SingleRankCommunicator::reduce_scatter(const void* send, void* recv, std::int64_t count, DType type,
                                            ReduceOp) {
  copy(send, recv, count, type);
}

std::unique_ptr<Request> SingleRankCommunicator::isend(const void*, std::int64_t, DType, int peer, int) {
  throw std::logic_error("single-rank communicator: send to rank " + std::to_string(peer) +
                         " in a group of one");
}

std::unique_ptr<Request> SingleRankCommunicator::irecv(void*, std::int64_t, DType, int peer, int) {
  throw std::logic_error("single-rank communicator: receive from rank " + std::to_string(peer) +
                         " in a group of one");
}

std::unique_ptr<Communicator> SingleRankCommunicator::split(int, int) {
  return std::make_unique<SingleRankCommunicator>(device_);
}

void SingleRankCommunicator::abort(const std::string& why) {
  std::fprintf(stderr, "ptdp: abort: %s\n", why.c_str());
  std::exit(1);
}

}  // namespace ptdp
