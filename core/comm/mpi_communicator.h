// The Communicator over MPI (Open MPI, or any MPI-3 library). Every operation
// is posted non-blocking and polled with a deadline, so a dead or silent peer
// ends the job with MPI_Abort (non-zero exit) instead of a hang. Every MPI
// return code is checked; messages name the rank, host, call and place.
#pragma once
#include <mpi.h>

#include <string>

#include "core/comm/communicator.h"

namespace ptdp {

class MpiCommunicator final : public Communicator {
 public:
  // Wraps `comm` (owned: freed at destruction unless it is MPI_COMM_WORLD).
  MpiCommunicator(MPI_Comm comm, double timeout_s);
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "mpi"; }
  void all_reduce(void* buf, std::int64_t count, DType type, ReduceOp op) override;
  void all_gather(const void* send, void* recv, std::int64_t count, DType type) override;
  void reduce_scatter(const void* send, void* recv, std::int64_t count, DType type, ReduceOp op) override;
  void broadcast(void* buf, std::int64_t count, DType type, int root) override;
  double all_reduce_host(double value, ReduceOp op) override;
  std::unique_ptr<Request> isend(const void* buf, std::int64_t count, DType type, int peer, int tag) override;
  std::unique_ptr<Request> irecv(void* buf, std::int64_t count, DType type, int peer, int tag) override;
  void barrier() override;
  std::unique_ptr<Communicator> split(int color, int key) override;
  [[noreturn]] void abort(const std::string& why) override;

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  double timeout_s_;
};

// Polls `request` until it completes; after `timeout_s` seconds aborts the job
// with a message naming `what`. Yields the core while waiting (ranks may
// outnumber cores).
void mpi_wait(MPI_Request& request, double timeout_s, const std::string& what);

// Aborts the whole job after printing "ptdp: rank R (host): why".
[[noreturn]] void mpi_abort(const std::string& why);

// Checks an MPI return code: on failure prints the call, file:line, rank, host
// and MPI's error string, then aborts the job.
void mpi_check(int code, const char* call, const char* file, int line);
#define PTDP_MPI_CHECK(call) ::ptdp::mpi_check((call), #call, __FILE__, __LINE__)

}  // namespace ptdp
