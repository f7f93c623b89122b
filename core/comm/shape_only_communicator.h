// Rank `rank` of a group of `size` that only this process runs: nothing is
// communicated, every buffer keeps its shape and this rank's data. Collectives
// leave each buffer as it is (all_reduce: this rank's partial sums), gathers and
// reduce-scatters copy this rank's block, sends are dropped and receives yield
// zeros. The model then runs exactly the kernels one rank of a t-way (or p-stage)
// run would, at the same shard shapes, so a slice can time one rank's share and
// leave the communication to the cost model.
#pragma once
#include <cstddef>
#include <functional>

#include "core/comm/communicator.h"

namespace ptdp {

class ShapeOnlyCommunicator final : public Communicator {
 public:
  // Clears `bytes` at a received buffer. Null: a host memset on the CPU;
  // device buffers are then left as they are (pass the backend's clear, e.g.
  // an asynchronous memset on its stream, to zero them). Gathers and
  // reduce-scatters copy this rank's block on the host; device buffers are
  // left as they are (the values do not matter for timing, the shapes do).
  using Clear = std::function<void(void* buf, std::size_t bytes)>;
  ShapeOnlyCommunicator(int rank, int size, Device device = Device::cpu, Clear clear = nullptr);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "shape-only"; }
  void all_reduce(void*, std::int64_t, DType, ReduceOp) override {}
  void all_gather(const void* send, void* recv, std::int64_t count, DType type) override;
  void reduce_scatter(const void* send, void* recv, std::int64_t count, DType type, ReduceOp) override;
  void broadcast(void*, std::int64_t, DType, int) override {}
  double all_reduce_host(double value, ReduceOp) override { return value; }
  std::unique_ptr<Request> isend(const void*, std::int64_t, DType, int peer, int) override;
  std::unique_ptr<Request> irecv(void* buf, std::int64_t count, DType type, int peer, int) override;
  void barrier() override {}
  // A group of one with this communicator's device and clear.
  std::unique_ptr<Communicator> split(int, int) override;
  [[noreturn]] void abort(const std::string& why) override;

  static Clear host_clear();

 private:
  void check_peer(int peer, const char* op) const;
  void copy_block(const void* src, void* dst, std::int64_t count, DType type) const;
  int rank_, size_;
  Device device_;
  Clear clear_;
};

}  // namespace ptdp
