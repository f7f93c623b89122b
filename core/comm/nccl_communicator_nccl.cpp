// NcclCommunicator: collectives on the compute stream, point-to-point over one
// 2-rank communicator per direction, host waits that poll with a deadline.
// Every NCCL communicator is non-blocking (ncclConfig_t::blocking = 0): a call
// may answer ncclInProgress, after which the communicator is polled
// (ncclCommGetAsyncError, deadline) until the call has been carried out, so
// creation, split and finalize never block the host without a deadline.
#include "core/comm/nccl_communicator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <limits>
#include <stdexcept>
#include <thread>

#include "core/comm/nccl_detail.h"
#include "core/io/poll_wait.h"
#include "core/kernels/cuda/cuda_query.h"

namespace ptdp {

using namespace nccl_detail;

namespace {

constexpr double kAbortLimitS = 10;  // longest wait for ncclCommAbort before the job is ended anyway
constexpr std::size_t kScalars = 4;  // see NcclCommunicator::scalar_

// The asynchronous state of `comms`: in progress while any is, failed (with
// `error` set) when any reports an error.
Progress async_progress(const std::vector<ncclComm_t>& comms, std::string& error) {
  bool pending = false;
  for (ncclComm_t c : comms) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(c, &state);
    if (r != ncclSuccess) {
      error = std::string("ncclCommGetAsyncError failed: ") + ncclGetErrorString(r);
      return Progress::failed;
    }
    if (state == ncclInProgress) {
      pending = true;
    } else if (state != ncclSuccess) {
      const char* last = ncclGetLastError(c);
      error = std::string("asynchronous NCCL error: ") + ncclGetErrorString(state) +
              (last != nullptr && *last != '\0' ? std::string("; last error: ") + last : std::string());
      return Progress::failed;
    }
  }
  return pending ? Progress::in_progress : Progress::ready;
}

// ncclCommAbort may wait for the other ranks of the node (NVIDIA/nccl#863); it
// runs on a helper thread so the job is ended after `limit_s` whatever happens.
void abort_bounded(const std::vector<ncclComm_t>& comms, double limit_s) {
  if (comms.empty()) return;
  auto finished = std::make_shared<std::atomic<bool>>(false);
  try {
    std::thread([comms, finished] {
      for (ncclComm_t c : comms) ncclCommAbort(c);
      finished->store(true);
    }).detach();
  } catch (const std::exception&) {  // no thread: abort here, unbounded
    for (ncclComm_t c : comms) ncclCommAbort(c);
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (!finished->load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// Destructor-side NCCL call: reports a failure, never throws.
void report(ncclResult_t r, const char* call) {
  if (r == ncclSuccess) return;
  std::fprintf(stderr, "ptdp: %s: %s failed: %s\n", where(this_process()).c_str(), call, ncclGetErrorString(r));
}

}  // namespace

std::string NcclCommunicator::nccl_version() {
  int v = 0;
  PTDP_NCCL_CHECK(ncclGetVersion(&v));
  // NCCL_VERSION(X, Y, Z) is X·10000 + Y·100 + Z since 2.9, X·1000 + Y·100 + Z before.
  const int major = v >= 10000 ? v / 10000 : v / 1000;
  const int minor = v >= 10000 ? v / 100 % 100 : v / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
}

NcclCommunicator::NcclCommunicator(std::unique_ptr<Communicator> host, cudaStream_t compute, double timeout_s)
    : host_(std::move(host)), compute_(compute), timeout_s_(timeout_s) {
  if (!host_) throw std::invalid_argument("NCCL communicator: no host communicator");
  if (!(timeout_s > 0)) throw std::invalid_argument("NCCL communicator: timeout must be positive");
  rank_ = host_->rank();
  size_ = host_->size();
  try {
    PTDP_CUDA_CHECK(cudaGetDevice(&device_));
    PTDP_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&scalar_), kScalars * sizeof(double)));
    PTDP_CUDA_CHECK(cudaMemsetAsync(scalar_, 0, kScalars * sizeof(double), compute_));
    PTDP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned_), sizeof(double)));
    PTDP_CUDA_CHECK(cudaEventCreateWithFlags(&host_wait_, cudaEventDisableTiming));
  } catch (...) {
    release();
    throw;
  }
}

std::unique_ptr<NcclCommunicator> NcclCommunicator::create_world(std::unique_ptr<Communicator> host,
                                                                 cudaStream_t compute, double timeout_s) {
  if (!host) throw std::invalid_argument("NCCL communicator: no host communicator");
  ncclUniqueId id{};
  if (host->rank() == 0) PTDP_NCCL_CHECK(ncclGetUniqueId(&id));
  if (host->size() > 1) {
    host->broadcast(&id, kIdInts, DType::i32, 0);
    host->barrier();  // every rank holds the id before any blocks in ncclCommInitRank (MPI progress)
  }
  std::unique_ptr<NcclCommunicator> c(new NcclCommunicator(std::move(host), compute, timeout_s));
  ncclConfig_t config = nonblocking_config();
  // The call sets comm_ before it may be polled: result first, then the poll.
  const ncclResult_t r = ncclCommInitRankConfig(&c->comm_, c->size_, id, c->rank_, &config);
  c->enqueued(r, {c->comm_}, "ncclCommInitRankConfig (the world's communicator)", __FILE__, __LINE__);
  return c;
}

NcclCommunicator::~NcclCommunicator() {
  // After a failure (this rank's, seen as an exception) the peers may never
  // finalize: abort instead of waiting for them.
  if (broken_ || std::uncaught_exceptions() > 0) {
    abort_comms();
  } else {
    for (auto& [direction, ch] : channels_) {
      if (ch.comm == nullptr) continue;
      if (cudaEventRecord(ch.ready, ch.stream) == cudaSuccess)
        wait_event(ch.ready, {ch.comm}, "the last message " + std::string(direction.first == rank_ ? "to " : "from ") +
                                            peer_name(direction.first == rank_ ? direction.second : direction.first));
    }
    finalize_comms();
  }
  release();
}

// Non-blocking finalize answers ncclInProgress: poll each communicator (deadline)
// before destroying it; one that fails or hangs gets all of them aborted.
void NcclCommunicator::finalize_comms() noexcept {
  for (ncclComm_t c : all_comms()) {
    const ncclResult_t r = ncclCommFinalize(c);
    if (r == ncclInProgress) {
      std::string error;
      const Settled s = settle(timeout_s_, [&] { return async_progress({c}, error); }, [](Settled) {});
      if (s != Settled::ready) {
        std::fprintf(stderr, "ptdp: %s: ncclCommFinalize %s; aborting the NCCL communicators\n",
                     where(this_process()).c_str(), s == Settled::timed_out ? "timed out" : error.c_str());
        abort_comms();
        return;
      }
    } else {
      report(r, "ncclCommFinalize");
    }
  }
  for (ncclComm_t c : all_comms()) report(ncclCommDestroy(c), "ncclCommDestroy");
}

void NcclCommunicator::release() noexcept {
  for (auto& [direction, ch] : channels_) {
    if (ch.ready != nullptr) cudaEventDestroy(ch.ready);
    if (ch.stream != nullptr) cudaStreamDestroy(ch.stream);
  }
  channels_.clear();
  if (host_wait_ != nullptr) cudaEventDestroy(host_wait_);
  if (pinned_ != nullptr) cudaFreeHost(pinned_);
  if (scalar_ != nullptr) cudaFree(scalar_);
  host_wait_ = nullptr;
  pinned_ = nullptr;
  scalar_ = nullptr;
}

std::vector<ncclComm_t> NcclCommunicator::all_comms() const {
  std::vector<ncclComm_t> out;
  for (const auto& [direction, ch] : channels_)
    if (ch.comm != nullptr) out.push_back(ch.comm);
  if (comm_ != nullptr) out.push_back(comm_);
  return out;
}

void NcclCommunicator::abort_comms() {
  broken_ = true;
  abort_bounded(all_comms(), std::min(timeout_s_, kAbortLimitS));
  for (auto& [direction, ch] : channels_) ch.comm = nullptr;
  comm_ = nullptr;
}

void NcclCommunicator::fail(const std::string& what) {
  const std::string why = where(this_process()) + ", rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                          " in its NCCL group: " + what + "; aborting the job";
  abort_comms();
  host_->abort(why);
  std::abort();  // not reached: the host communicator's abort ends the process
}

void NcclCommunicator::abort(const std::string& why) {
  abort_comms();
  host_->abort(why);
  std::abort();  // not reached
}

void NcclCommunicator::check_async(const std::vector<ncclComm_t>& comms, const std::string& what) {
  std::string error;
  if (async_progress(comms, error) == Progress::failed) fail(what + ": " + error);
}

void NcclCommunicator::await(const std::vector<ncclComm_t>& comms, const std::string& what) {
  std::string error;
  settle(timeout_s_, [&] { return async_progress(comms, error); }, [&](Settled s) {
    fail(what + (s == Settled::timed_out ? " did not finish within " + std::to_string(static_cast<int>(timeout_s_)) +
                                               " s (a peer died, stopped answering, or never made the same call)"
                                         : ": " + error));
  });
}

void NcclCommunicator::enqueued(ncclResult_t r, const std::vector<ncclComm_t>& comms, const char* expr,
                                const char* file, int line) {
  if (r == ncclInProgress) return await(comms, std::string(expr) + " (" + file + ":" + std::to_string(line) + ")");
  cuda::check(r, expr, file, line);
}

void NcclCommunicator::wait_event(cudaEvent_t event, const std::vector<ncclComm_t>& comms, const std::string& what) {
  const bool done = poll_until(timeout_s_, [&](long polls) {
    const QueryResult q = cuda::read_event(event);
    if (q.state == QueryState::failed) fail(what + ": " + cuda::describe(q.error));
    if (q.state == QueryState::ready) return true;
    if ((polls & 63) == 0) check_async(comms, what);
    return false;
  });
  if (!done)
    fail(what + " did not complete within " + std::to_string(static_cast<int>(timeout_s_)) +
         " s (a peer died, stopped answering, or never posted the matching call)");
}

void NcclCommunicator::all_reduce(void* buf, std::int64_t count, DType type, ReduceOp op) {
  PTDP_NCCL_ENQUEUE(ncclAllReduce(buf, buf, nccl_count(count), nccl_type(type), nccl_op(op), comm_, compute_), {comm_});
  this->count(payload(count, type));
}

void NcclCommunicator::all_gather(const void* send, void* recv, std::int64_t count, DType type) {
  PTDP_NCCL_ENQUEUE(ncclAllGather(send, recv, nccl_count(count), nccl_type(type), comm_, compute_), {comm_});
  this->count(payload(count, type));
}

void NcclCommunicator::reduce_scatter(const void* send, void* recv, std::int64_t count, DType type, ReduceOp op) {
  PTDP_NCCL_ENQUEUE(ncclReduceScatter(send, recv, nccl_count(count), nccl_type(type), nccl_op(op), comm_, compute_),
                    {comm_});
  this->count(payload(count, type) * size_);
}

void NcclCommunicator::broadcast(void* buf, std::int64_t count, DType type, int root) {
  if (root < 0 || root >= size_)
    throw std::invalid_argument("NCCL communicator: broadcast from rank " + std::to_string(root) +
                                " in a group of " + std::to_string(size_));
  PTDP_NCCL_ENQUEUE(ncclBroadcast(buf, buf, nccl_count(count), nccl_type(type), root, comm_, compute_), {comm_});
  this->count(payload(count, type));
}

double NcclCommunicator::all_reduce_host(double value, ReduceOp op) {
  *pinned_ = value;  // the previous call waited for its copy back: the value is free
  PTDP_CUDA_CHECK(cudaMemcpyAsync(scalar_, pinned_, sizeof(double), cudaMemcpyHostToDevice, compute_));
  PTDP_NCCL_ENQUEUE(ncclAllReduce(scalar_, scalar_, 1, ncclFloat64, nccl_op(op), comm_, compute_), {comm_});
  PTDP_CUDA_CHECK(cudaMemcpyAsync(pinned_, scalar_, sizeof(double), cudaMemcpyDeviceToHost, compute_));
  PTDP_CUDA_CHECK(cudaEventRecord(host_wait_, compute_));
  wait_event(host_wait_, {comm_}, "all-reduce of a host value");
  return *pinned_;
}

void NcclCommunicator::barrier() {
  PTDP_NCCL_ENQUEUE(ncclAllReduce(scalar_ + 1, scalar_ + 1, 1, ncclFloat64, ncclSum, comm_, compute_), {comm_});
  PTDP_CUDA_CHECK(cudaEventRecord(host_wait_, compute_));
  wait_event(host_wait_, {comm_}, "barrier");
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) {
  if (color < 0) throw std::invalid_argument("NCCL communicator: split with negative color " + std::to_string(color));
  std::unique_ptr<NcclCommunicator> sub(new NcclCommunicator(host_->split(color, key), compute_, timeout_s_));
  ncclConfig_t config = nonblocking_config();
  // The new communicator answers for the split; the parent is polled too (it
  // takes part in the split and must be idle before its next call).
  const ncclResult_t r = ncclCommSplit(comm_, color, key, &sub->comm_, &config);
  sub->enqueued(r, {comm_, sub->comm_}, "ncclCommSplit", __FILE__, __LINE__);
  int n = 0, me = 0;
  PTDP_NCCL_CHECK(ncclCommCount(sub->comm_, &n));
  PTDP_NCCL_CHECK(ncclCommUserRank(sub->comm_, &me));
  if (n != sub->size_ || me != sub->rank_)
    throw std::logic_error("NCCL communicator: split gave rank " + std::to_string(me) + " of " + std::to_string(n) +
                           ", the host communicator rank " + std::to_string(sub->rank_) + " of " +
                           std::to_string(sub->size_));
  return sub;
}

}  // namespace ptdp
