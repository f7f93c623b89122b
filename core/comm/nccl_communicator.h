// The Communicator over NCCL, on device buffers. Collectives are enqueued on the
// compute stream (ordered with the kernels around them; the host does not wait).
// Point-to-point goes over one 2-rank NCCL communicator and stream per directed
// pair (me → peer), so a send outside a group never waits behind the opposite
// direction; the executor groups each schedule step's transfers (group_start/
// group_end), which NCCL launches together. Every communicator is non-blocking;
// every host wait polls with a deadline and aborts the job; every NCCL call is checked.
#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/comm/communicator.h"
#include "core/kernels/cuda/cuda_check.h"

namespace ptdp {

namespace cuda {
// A failed NCCL call: NCCL's error string and its last error message (NCCL
// ignores the comm argument of ncclGetLastError: the message is per thread).
inline void check(ncclResult_t r, const char* expr, const char* file, int line) {
  if (r == ncclSuccess) return;
  const char* last = ncclGetLastError(nullptr);
  fail(std::string("NCCL error: ") + ncclGetErrorString(r) +
           (last != nullptr && *last != '\0' ? std::string("; last error: ") + last : std::string()),
       expr, file, line);
}
}  // namespace cuda

// Prints the expression, file:line, rank, host, ncclGetErrorString and
// ncclGetLastError, then throws std::runtime_error (as PTDP_CUDA_CHECK does).
#define PTDP_NCCL_CHECK(expr) ::ptdp::cuda::check((expr), #expr, __FILE__, __LINE__)

class NcclP2pRequest;

class NcclCommunicator final : public Communicator {
 public:
  // The world's communicator. `host`: the host-side communicator of the same
  // ranks (MPI, or a SingleRankCommunicator for one GPU without MPI); rank 0's
  // ncclUniqueId travels over it. The current CUDA device is this rank's GPU.
  // `compute`: the stream of the kernels that produce and consume the buffers
  // (must outlive the communicator); `timeout_s`: deadline of every host wait.
  static std::unique_ptr<NcclCommunicator> create_world(std::unique_ptr<Communicator> host,
                                                        cudaStream_t compute, double timeout_s);
  // The linked library's version, "2.28.9".
  static std::string nccl_version();

  // Collective (NCCL's finalize may wait for the peers): every rank destroys
  // its communicators in the same order. Waits (deadline) for the last message
  // of each direction, finalizes and destroys the NCCL communicators (aborts
  // them while an exception unwinds), frees the rest. Requests must not outlive it.
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "nccl"; }
  void all_reduce(void* buf, std::int64_t count, DType type, ReduceOp op) override;
  void all_gather(const void* send, void* recv, std::int64_t count, DType type) override;
  void reduce_scatter(const void* send, void* recv, std::int64_t count, DType type, ReduceOp op) override;
  void broadcast(void* buf, std::int64_t count, DType type, int root) override;
  double all_reduce_host(double value, ReduceOp op) override;
  // Tags are not used: messages of one direction match in program order.
  std::unique_ptr<Request> isend(const void* buf, std::int64_t count, DType type, int peer, int tag) override;
  std::unique_ptr<Request> irecv(void* buf, std::int64_t count, DType type, int peer, int tag) override;
  void barrier() override;
  // ncclGroupStart / ncclGroupEnd; requests posted in between get their
  // completion events at the group's end and must live until then.
  void group_start() override;
  void group_end() override;
  void prepare_p2p(const std::vector<int>& peers) override;
  std::unique_ptr<Communicator> split(int color, int key) override;
  [[noreturn]] void abort(const std::string& why) override;

  // --- overlapped all-reduce (nccl_overlap_nccl.cpp) ---------------------------
  // On this group's reduce stream, after an event of the compute stream; the
  // request's wait() makes the compute stream wait for it (the host does not).
  std::unique_ptr<Request> all_reduce_overlapped(void* buf, std::int64_t count, DType type, ReduceOp op) override;
  // The distributed optimizer's: the same stream and request.
  std::unique_ptr<Request> reduce_scatter_overlapped(const void* send, void* recv, std::int64_t count, DType type,
                                                     ReduceOp op) override;
  std::unique_ptr<Request> all_gather_overlapped(const void* send, void* recv, std::int64_t count,
                                                 DType type) override;

 private:
  friend class NcclP2pRequest;
  friend class NcclReduceRequest;
  // One direction of point-to-point: rank 0 of `comm` sends, rank 1 receives.
  struct Channel {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;  // owned; ordered after the compute stream per message
    cudaEvent_t ready = nullptr;    // the compute stream's tail, waited on by `stream`
  };
  using Direction = std::pair<int, int>;  // (sender, receiver), ranks of this group

  NcclCommunicator(std::unique_ptr<Communicator> host, cudaStream_t compute, double timeout_s);
  const Channel& channel(Direction d, int peer, const char* op) const;
  std::vector<std::pair<ncclUniqueId, ncclUniqueId>> exchange_ids(const std::vector<int>& peers);
  void connect_channels(const std::vector<int>& peers);
  // Polls until `event` completed; aborts the job after the deadline or on an
  // asynchronous error of `comms`, naming `what`.
  void wait_event(cudaEvent_t event, const std::vector<ncclComm_t>& comms, const std::string& what);
  void check_async(const std::vector<ncclComm_t>& comms, const std::string& what);
  // Polls `comms` (ncclCommGetAsyncError) until no longer ncclInProgress; fails
  // the job after the deadline or on an error, naming `what`.
  void await(const std::vector<ncclComm_t>& comms, const std::string& what);
  // The result of a call on `comms`: ncclInProgress is awaited, an error throws.
  void enqueued(ncclResult_t r, const std::vector<ncclComm_t>& comms, const char* expr, const char* file, int line);
  void posted(NcclP2pRequest& request, const Channel& ch);
  void finalize_comms() noexcept;
  // Aborts the NCCL communicators, then the job through the host communicator.
  [[noreturn]] void fail(const std::string& what);
  // Every NCCL communicator, in the order all ranks agree on (channels by direction, then the group).
  std::vector<ncclComm_t> all_comms() const;
  void abort_comms();
  void release() noexcept;

  std::unique_ptr<Communicator> host_;  // declared first: outlives everything below
  cudaStream_t compute_;
  double timeout_s_;
  int rank_ = 0, size_ = 1;
  int device_ = 0;
  ncclComm_t comm_ = nullptr;
  std::map<Direction, Channel> channels_;
  // Device: [0] all_reduce_host's value, [1] the barrier's token (compute
  // stream); [2] sent and [3] received by the first message of each direction.
  double* scalar_ = nullptr;
  double* pinned_ = nullptr;       // pinned host copy of scalar_[0]
  cudaEvent_t host_wait_ = nullptr;  // recorded on the compute stream before a host wait
  bool broken_ = false;              // communicators aborted: the destructor must not finalize
  // The stream of the overlapped all-reduces and the compute-stream event it waits on.
  struct ReduceStream {
    cudaStream_t stream = nullptr;
    cudaEvent_t ready = nullptr;
    ReduceStream() = default;
    ReduceStream(const ReduceStream&) = delete;
    ReduceStream& operator=(const ReduceStream&) = delete;
    ~ReduceStream();
  };
  ReduceStream reduce_;  // created at the first overlapped all-reduce
  // Orders the reduce stream (created on first use) after the compute stream's
  // work so far; false for a type the overlapped path does not take (not f32/f64).
  bool enter_reduce_stream(std::int64_t count, DType type);
  int group_depth_ = 0;              // open group_start calls
  std::vector<std::pair<NcclP2pRequest*, cudaStream_t>> group_;  // requests awaiting group_end
  std::vector<ncclComm_t> group_comms_;                           // channels used in the open group
};

}  // namespace ptdp
