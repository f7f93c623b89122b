// The communicator of a group of one: collectives are copies or no-ops.
// Point-to-point with oneself is not used by any schedule and is refused.
#pragma once
#include "core/comm/communicator.h"

namespace ptdp {

class SingleRankCommunicator final : public Communicator {
 public:
  explicit SingleRankCommunicator(Device device = Device::cpu) : device_(device) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend() const override { return "single"; }
  void all_reduce(void*, std::int64_t, DType, ReduceOp) override {}
  void all_gather(const void* send, void* recv, std::int64_t count, DType type) override;
  void reduce_scatter(const void* send, void* recv, std::int64_t count, DType type, ReduceOp) override;
  void broadcast(void*, std::int64_t, DType, int) override {}
  double all_reduce_host(double value, ReduceOp) override { return value; }
  std::unique_ptr<Request> isend(const void*, std::int64_t, DType, int, int) override;
  std::unique_ptr<Request> irecv(void*, std::int64_t, DType, int, int) override;
  void barrier() override {}
  std::unique_ptr<Communicator> split(int, int) override;
  [[noreturn]] void abort(const std::string& why) override;

 private:
  void copy(const void* src, void* dst, std::int64_t count, DType type);
  Device device_;
};

}  // namespace ptdp
