// Communicator: the collective and point-to-point operations the runtime uses,
// over one group of ranks. Backends: single rank (no-op), MPI, NCCL. Buffers
// live on the backend's device. Every backend counts the payload bytes it moves.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor/dtype.h"

namespace ptdp {

enum class ReduceOp { sum, max };

// A pending non-blocking send or receive; wait() returns when it completed and
// throws (or aborts the job) when the peer does not answer within the timeout.
class Request {
 public:
  virtual ~Request() = default;
  virtual void wait() = 0;
  // True when the operation has completed (never blocks).
  virtual bool test() = 0;
  // Makes a received buffer usable by the work issued after this call: host
  // backends wait (deadline); device backends order the compute stream after
  // the transfer without a host wait (the next host synchronisation carries the
  // deadline). For a send it is wait().
  virtual void order_before_use() { wait(); }
};

// A request that completed when it was made (blocking backends' overlapped calls).
class CompletedRequest final : public Request {
 public:
  void wait() override {}
  bool test() override { return true; }
};

struct CommStats {
  std::int64_t bytes = 0;  // payload bytes this rank contributed to operations
  std::int64_t calls = 0;  // operations issued
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;

  // In place over `count` elements.
  virtual void all_reduce(void* buf, std::int64_t count, DType type, ReduceOp op) = 0;
  // recv holds size()·count elements, rank i's block at i·count.
  virtual void all_gather(const void* send, void* recv, std::int64_t count, DType type) = 0;
  // send holds size()·count elements; recv gets this rank's reduced block.
  virtual void reduce_scatter(const void* send, void* recv, std::int64_t count, DType type,
                              ReduceOp op) = 0;
  virtual void broadcast(void* buf, std::int64_t count, DType type, int root) = 0;
  // A host scalar reduced over the group (norms, loss sums, flags).
  virtual double all_reduce_host(double value, ReduceOp op) = 0;
  virtual std::unique_ptr<Request> isend(const void* buf, std::int64_t count, DType type, int peer,
                                         int tag) = 0;
  virtual std::unique_ptr<Request> irecv(void* buf, std::int64_t count, DType type, int peer,
                                         int tag) = 0;
  virtual void barrier() = 0;

  // An in-place all-reduce that may run while the caller queues more work (NCCL:
  // on a stream of its own, ordered after the device work queued so far). The
  // buffer must not be touched until the request's wait(), after which the device
  // work queued next sees the result (NCCL orders the compute stream after it; the
  // host does not block). Every rank issues them in the same order. Default: the
  // blocking all_reduce and a completed request.
  virtual std::unique_ptr<Request> all_reduce_overlapped(void* buf, std::int64_t count, DType type, ReduceOp op) {
    all_reduce(buf, count, type, op);
    return std::make_unique<CompletedRequest>();
  }

  // The distributed optimizer's gradient buckets and parameter gather, with
  // all_reduce_overlapped's contract (neither buffer touched until wait()).
  // Default: the blocking call and a completed request.
  virtual std::unique_ptr<Request> reduce_scatter_overlapped(const void* send, void* recv, std::int64_t count,
                                                             DType type, ReduceOp op) {
    reduce_scatter(send, recv, count, type, op);
    return std::make_unique<CompletedRequest>();
  }
  virtual std::unique_ptr<Request> all_gather_overlapped(const void* send, void* recv, std::int64_t count,
                                                         DType type) {
    all_gather(send, recv, count, type);
    return std::make_unique<CompletedRequest>();
  }

  // Point-to-point calls between group_start() and group_end() form one step
  // (Megatron's batch_isend_irecv): the backend may issue them together, so a
  // send and a receive of the same step never wait on each other. Requests
  // posted inside must live until group_end(); receives are usable after
  // order_before_use(), once the group ended. No-ops where every call is
  // already non-blocking (MPI, single rank).
  virtual void group_start() {}
  virtual void group_end() {}

  // Collective over the group: every rank names the ranks it will isend to or
  // irecv from (the pipeline group: its neighbours). Backends whose point-to-point
  // needs set-up (NCCL: one communicator per direction) make it here; others ignore it.
  virtual void prepare_p2p(const std::vector<int>& /*peers*/) {}

  // The sub-communicator of the ranks passing the same color, ordered by key.
  // Collective over this communicator.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;

  // Ends every process of the job with a non-zero status (a broken run must not hang).
  [[noreturn]] virtual void abort(const std::string& why) = 0;

  virtual const CommStats& stats() const { return stats_; }

 protected:
  void count(std::int64_t bytes) {
    stats_.bytes += bytes;
    ++stats_.calls;
  }

 private:
  CommStats stats_;
};

}  // namespace ptdp
