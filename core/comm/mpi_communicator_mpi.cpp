// MpiCommunicator: non-blocking MPI calls with checked return codes and deadlines.
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "core/comm/mpi_communicator.h"
#include "core/io/poll_wait.h"
#include "core/topology/process_place.h"

namespace ptdp {

namespace {

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::i32: return MPI_INT;
    default: throw std::invalid_argument("MPI communicator: no MPI type for " + dtype_name(t));
  }
}

MPI_Op mpi_op(ReduceOp op) { return op == ReduceOp::sum ? MPI_SUM : MPI_MAX; }

int mpi_count(std::int64_t count) {
  if (count < 0 || count > std::numeric_limits<int>::max())
    throw std::invalid_argument("MPI communicator: count " + std::to_string(count) + " exceeds an MPI int");
  return static_cast<int>(count);
}

// A posted send or receive; waits with the communicator's deadline.
class MpiRequest final : public Request {
 public:
  MpiRequest(MPI_Request r, double timeout_s, std::string what)
      : request_(r), timeout_s_(timeout_s), what_(std::move(what)) {}
  ~MpiRequest() override {
    if (request_ != MPI_REQUEST_NULL) mpi_wait(request_, timeout_s_, what_);
  }
  void wait() override { mpi_wait(request_, timeout_s_, what_); }
  bool test() override {
    int done = 0;
    PTDP_MPI_CHECK(MPI_Test(&request_, &done, MPI_STATUS_IGNORE));
    return done != 0;
  }

 private:
  MPI_Request request_;
  double timeout_s_;
  std::string what_;
};

}  // namespace

void mpi_check(int code, const char* call, const char* file, int line) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  MPI_Error_string(code, text, &length);
  mpi_abort(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " + text);
}

void mpi_abort(const std::string& why) {
  std::fprintf(stderr, "ptdp: %s: %s\n", where(this_process()).c_str(), why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::_Exit(3);
}

void mpi_wait(MPI_Request& request, double timeout_s, const std::string& what) {
  const bool done = poll_until(timeout_s, [&request](long) {
    int flag = 0;
    PTDP_MPI_CHECK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
    return flag != 0;
  });
  if (!done)
    mpi_abort(what + " did not complete within " + std::to_string(static_cast<int>(timeout_s)) +
              " s (a peer died or stopped answering); aborting the job");
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, double timeout_s) : comm_(comm), timeout_s_(timeout_s) {
  PTDP_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  PTDP_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  PTDP_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
}

void MpiCommunicator::all_reduce(void* buf, std::int64_t count, DType type, ReduceOp op) {
  MPI_Request r;
  PTDP_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, buf, mpi_count(count), mpi_type(type), mpi_op(op), comm_, &r));
  mpi_wait(r, timeout_s_, "all-reduce of " + std::to_string(count) + " elements");
  this->count(count * static_cast<std::int64_t>(dtype_size(type)));
}

void MpiCommunicator::all_gather(const void* send, void* recv, std::int64_t count, DType type) {
  MPI_Request r;
  const MPI_Datatype t = mpi_type(type);
  PTDP_MPI_CHECK(MPI_Iallgather(send, mpi_count(count), t, recv, mpi_count(count), t, comm_, &r));
  mpi_wait(r, timeout_s_, "all-gather of " + std::to_string(count) + " elements");
  this->count(count * static_cast<std::int64_t>(dtype_size(type)));
}

void MpiCommunicator::reduce_scatter(const void* send, void* recv, std::int64_t count, DType type, ReduceOp op) {
  MPI_Request r;
  PTDP_MPI_CHECK(MPI_Ireduce_scatter_block(send, recv, mpi_count(count), mpi_type(type), mpi_op(op), comm_, &r));
  mpi_wait(r, timeout_s_, "reduce-scatter of " + std::to_string(count) + " elements");
  this->count(count * size_ * static_cast<std::int64_t>(dtype_size(type)));
}

void MpiCommunicator::broadcast(void* buf, std::int64_t count, DType type, int root) {
  MPI_Request r;
  PTDP_MPI_CHECK(MPI_Ibcast(buf, mpi_count(count), mpi_type(type), root, comm_, &r));
  mpi_wait(r, timeout_s_, "broadcast of " + std::to_string(count) + " elements");
  this->count(count * static_cast<std::int64_t>(dtype_size(type)));
}

double MpiCommunicator::all_reduce_host(double value, ReduceOp op) {
  MPI_Request r;
  double out = 0;
  PTDP_MPI_CHECK(MPI_Iallreduce(&value, &out, 1, MPI_DOUBLE, mpi_op(op), comm_, &r));
  mpi_wait(r, timeout_s_, "all-reduce of a host value");
  return out;
}

std::unique_ptr<Request> MpiCommunicator::isend(const void* buf, std::int64_t count, DType type, int peer, int tag) {
  MPI_Request r;
  PTDP_MPI_CHECK(MPI_Isend(buf, mpi_count(count), mpi_type(type), peer, tag, comm_, &r));
  this->count(count * static_cast<std::int64_t>(dtype_size(type)));
  return std::make_unique<MpiRequest>(r, timeout_s_, "send to rank " + std::to_string(peer) + " of its group");
}

std::unique_ptr<Request> MpiCommunicator::irecv(void* buf, std::int64_t count, DType type, int peer, int tag) {
  MPI_Request r;
  PTDP_MPI_CHECK(MPI_Irecv(buf, mpi_count(count), mpi_type(type), peer, tag, comm_, &r));
  return std::make_unique<MpiRequest>(r, timeout_s_, "receive from rank " + std::to_string(peer) + " of its group");
}

void MpiCommunicator::barrier() {
  MPI_Request r;
  PTDP_MPI_CHECK(MPI_Ibarrier(comm_, &r));
  mpi_wait(r, timeout_s_, "barrier");
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  MPI_Comm sub;
  PTDP_MPI_CHECK(MPI_Comm_split(comm_, color, key, &sub));
  return std::make_unique<MpiCommunicator>(sub, timeout_s_);
}

void MpiCommunicator::abort(const std::string& why) { mpi_abort(why); }

}  // namespace ptdp
