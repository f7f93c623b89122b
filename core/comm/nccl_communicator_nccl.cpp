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
#include <set>
#include <stdexcept>
#include <thread>

#include "core/comm/poll_wait.h"
#include "core/kernels/cuda/cuda_query.h"

namespace ptdp {

namespace {

constexpr int kIdInts = static_cast<int>(sizeof(ncclUniqueId) / sizeof(std::int32_t));
static_assert(sizeof(ncclUniqueId) % sizeof(std::int32_t) == 0, "ncclUniqueId travels as i32 elements");
constexpr int kIdTag = 32001;       // host-communicator tag of the ids of prepare_p2p (≤ MPI's minimum tag bound)
constexpr double kAbortLimitS = 10;  // longest wait for ncclCommAbort before the job is ended anyway
constexpr std::size_t kScalars = 4;  // see NcclCommunicator::scalar_

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::bf16: return ncclBfloat16;
    case DType::f16: return ncclFloat16;
    case DType::i32: return ncclInt32;
  }
  throw std::invalid_argument("NCCL communicator: no NCCL type for " + dtype_name(t));
}

// Non-blocking: calls on the communicator return ncclInProgress instead of
// blocking; NcclCommunicator::await polls them to completion with a deadline.
ncclConfig_t nonblocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

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

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::sum ? ncclSum : ncclMax; }

std::size_t nccl_count(std::int64_t count) {
  if (count < 0) throw std::invalid_argument("NCCL communicator: negative count " + std::to_string(count));
  return static_cast<std::size_t>(count);
}

std::int64_t payload(std::int64_t count, DType type) { return count * static_cast<std::int64_t>(dtype_size(type)); }

// A call on non-blocking communicators: an error throws as PTDP_NCCL_CHECK;
// ncclInProgress polls `comms` until the call was carried out (deadline).
#define PTDP_NCCL_ENQUEUE(expr, ...) enqueued((expr), __VA_ARGS__, #expr, __FILE__, __LINE__)

std::string peer_name(int peer) { return "rank " + std::to_string(peer) + " of its group"; }

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
  std::fprintf(stderr, "ptdp: %s: %s failed: %s\n", cuda::where().c_str(), call, ncclGetErrorString(r));
}

}  // namespace

// A posted send or receive: an event recorded on its channel's stream after the
// NCCL call. A receive, once complete, orders the compute stream after it.
class NcclP2pRequest final : public Request {
 public:
  NcclP2pRequest(NcclCommunicator& owner, ncclComm_t comm, bool receive, std::string what)
      : owner_(owner), comm_(comm), receive_(receive), what_(std::move(what)) {
    PTDP_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
  }
  // Never blocks: an unfinished request still orders the compute stream after
  // it, so the buffer is neither read nor reused before the transfer is done.
  ~NcclP2pRequest() override {
    if (!done_) cudaStreamWaitEvent(owner_.compute_, event_, 0);
    cudaEventDestroy(event_);
  }
  // After the NCCL call was enqueued (inside a group: after ncclGroupEnd).
  void record(cudaStream_t stream) { PTDP_CUDA_CHECK(cudaEventRecord(event_, stream)); }
  void wait() override {
    if (done_) return;
    owner_.wait_event(event_, {comm_}, what_);
    finish();
  }
  bool test() override {
    if (done_) return true;
    const QueryResult q = cuda::read_event(event_);
    if (q.state == QueryState::failed) owner_.fail(what_ + ": " + cuda::describe(q.error));
    if (q.state == QueryState::ready) {
      finish();
      return true;
    }
    owner_.check_async({comm_}, what_);
    return false;
  }
  // A receive orders the compute stream after it, no host wait (a hang shows
  // at the next host synchronisation, which has the deadline); a send waits.
  void order_before_use() override {
    if (done_) return;
    if (!receive_) return wait();
    finish();
  }

 private:
  void finish() {
    if (receive_) PTDP_CUDA_CHECK(cudaStreamWaitEvent(owner_.compute_, event_, 0));
    done_ = true;
  }
  NcclCommunicator& owner_;
  ncclComm_t comm_;
  bool receive_;
  std::string what_;
  cudaEvent_t event_ = nullptr;
  bool done_ = false;
};

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
                     cuda::where().c_str(), s == Settled::timed_out ? "timed out" : error.c_str());
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
  const std::string why = cuda::where() + ", rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
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

const NcclCommunicator::Channel& NcclCommunicator::channel(Direction d, int peer, const char* op) const {
  const auto it = channels_.find(d);
  if (it == channels_.end() || it->second.comm == nullptr)
    throw std::logic_error(std::string("NCCL communicator: ") + op + " " + peer_name(peer) + " (rank " +
                           std::to_string(rank_) + " of " + std::to_string(size_) +
                           "), which no prepare_p2p named: the group must name its peers first");
  return it->second;
}

std::unique_ptr<Request> NcclCommunicator::isend(const void* buf, std::int64_t count, DType type, int peer, int) {
  const Channel& ch = channel({rank_, peer}, peer, "send to");
  auto request = std::make_unique<NcclP2pRequest>(*this, ch.comm, false, "send to " + peer_name(peer));
  PTDP_CUDA_CHECK(cudaEventRecord(ch.ready, compute_));  // the kernels that wrote `buf`
  PTDP_CUDA_CHECK(cudaStreamWaitEvent(ch.stream, ch.ready, 0));
  PTDP_NCCL_ENQUEUE(ncclSend(buf, nccl_count(count), nccl_type(type), 1, ch.comm, ch.stream), {ch.comm});
  posted(*request, ch);
  this->count(payload(count, type));
  return request;
}

std::unique_ptr<Request> NcclCommunicator::irecv(void* buf, std::int64_t count, DType type, int peer, int) {
  const Channel& ch = channel({peer, rank_}, peer, "receive from");
  auto request = std::make_unique<NcclP2pRequest>(*this, ch.comm, true, "receive from " + peer_name(peer));
  PTDP_CUDA_CHECK(cudaEventRecord(ch.ready, compute_));  // `buf` allocated and no longer read there
  PTDP_CUDA_CHECK(cudaStreamWaitEvent(ch.stream, ch.ready, 0));
  PTDP_NCCL_ENQUEUE(ncclRecv(buf, nccl_count(count), nccl_type(type), 0, ch.comm, ch.stream), {ch.comm});
  posted(*request, ch);
  return request;
}

// A request's completion event goes on its channel's stream after the NCCL
// call; inside a group NCCL enqueues the calls only at ncclGroupEnd, so the
// event waits for group_end.
void NcclCommunicator::posted(NcclP2pRequest& request, const Channel& ch) {
  if (group_depth_ == 0) return request.record(ch.stream);
  group_.push_back({&request, ch.stream});
  if (std::find(group_comms_.begin(), group_comms_.end(), ch.comm) == group_comms_.end())
    group_comms_.push_back(ch.comm);
}

void NcclCommunicator::group_start() {
  PTDP_NCCL_CHECK(ncclGroupStart());
  ++group_depth_;
}

// NCCL joins the streams of a group's channels: the step's sends and receives
// start together once each channel's earlier messages finished. The executor
// groups only schedules whose steps pair up across ranks (core/schedule/deadlock.h).
void NcclCommunicator::group_end() {
  if (group_depth_ == 0) throw std::logic_error("NCCL communicator: group_end without group_start");
  --group_depth_;
  PTDP_NCCL_ENQUEUE(ncclGroupEnd(), group_comms_);
  if (group_depth_ > 0) return;
  for (auto& [request, stream] : group_) request->record(stream);
  group_.clear();
  group_comms_.clear();
}

void NcclCommunicator::prepare_p2p(const std::vector<int>& peers) {
  std::set<int> fresh;  // peers without channels yet; a pair always gets both directions at once
  for (int p : peers) {
    if (p < 0 || p >= size_ || p == rank_)
      throw std::invalid_argument("NCCL communicator: prepare_p2p names rank " + std::to_string(p) +
                                  ", not another rank of this group of " + std::to_string(size_) +
                                  " (this is rank " + std::to_string(rank_) + ")");
    if (channels_.count({rank_, p}) == 0) fresh.insert(p);
  }
  if (fresh.empty()) return;
  const std::vector<int> order(fresh.begin(), fresh.end());
  const auto ids = exchange_ids(order);
  PTDP_CUDA_CHECK(cudaSetDevice(device_));
  for (int p : order)
    for (const Direction& d : {Direction{rank_, p}, Direction{p, rank_}}) {
      Channel& ch = channels_[d];
      PTDP_CUDA_CHECK(cudaStreamCreateWithFlags(&ch.stream, cudaStreamNonBlocking));
      PTDP_CUDA_CHECK(cudaEventCreateWithFlags(&ch.ready, cudaEventDisableTiming));
    }
  // One group: every rank initialises all its directions at once, so no order
  // of creation between ranks can wait in a cycle. Non-blocking: the group's
  // end answers ncclInProgress and each new channel is polled to completion.
  ncclConfig_t config = nonblocking_config();
  std::vector<ncclComm_t> created;
  PTDP_NCCL_CHECK(ncclGroupStart());
  for (std::size_t i = 0; i < order.size(); ++i) {
    PTDP_NCCL_CHECK(ncclCommInitRankConfig(&channels_[{rank_, order[i]}].comm, 2, ids[i].first, 0, &config));
    PTDP_NCCL_CHECK(ncclCommInitRankConfig(&channels_[{order[i], rank_}].comm, 2, ids[i].second, 1, &config));
    created.push_back(channels_[{rank_, order[i]}].comm);
    created.push_back(channels_[{order[i], rank_}].comm);
  }
  PTDP_NCCL_ENQUEUE(ncclGroupEnd(), created);
  connect_channels(order);
}

// For each peer: (the id of me → peer, made here; the id of peer → me, made there).
std::vector<std::pair<ncclUniqueId, ncclUniqueId>> NcclCommunicator::exchange_ids(const std::vector<int>& peers) {
  std::vector<std::pair<ncclUniqueId, ncclUniqueId>> ids(peers.size());
  std::vector<std::unique_ptr<Request>> sends;
  for (std::size_t i = 0; i < peers.size(); ++i) {
    PTDP_NCCL_CHECK(ncclGetUniqueId(&ids[i].first));
    sends.push_back(host_->isend(&ids[i].first, kIdInts, DType::i32, peers[i], kIdTag));
  }
  for (std::size_t i = 0; i < peers.size(); ++i)
    host_->irecv(&ids[i].second, kIdInts, DType::i32, peers[i], kIdTag)->wait();
  for (auto& s : sends) s->wait();
  return ids;
}

// NCCL connects a direction lazily, at its first message, blocking the host
// until the peer posts its side; a first message of one element per direction
// connects every channel now, so no later isend blocks the host. The directions
// go one at a time in the (sender, receiver) order all ranks share: the
// smallest direction any rank waits on has both ends at it, so all complete.
void NcclCommunicator::connect_channels(const std::vector<int>& peers) {
  const std::set<int> fresh(peers.begin(), peers.end());
  for (const auto& [d, ch] : channels_) {
    const bool sender = d.first == rank_;
    const int peer = sender ? d.second : d.first;
    if (fresh.count(peer) == 0) continue;
    if (sender) {
      PTDP_CUDA_CHECK(cudaEventRecord(ch.ready, compute_));  // after the constructor's memset
      PTDP_CUDA_CHECK(cudaStreamWaitEvent(ch.stream, ch.ready, 0));
      PTDP_NCCL_ENQUEUE(ncclSend(scalar_ + 2, 1, ncclFloat64, 1, ch.comm, ch.stream), {ch.comm});
    } else {
      PTDP_NCCL_ENQUEUE(ncclRecv(scalar_ + 3, 1, ncclFloat64, 0, ch.comm, ch.stream), {ch.comm});
    }
    PTDP_CUDA_CHECK(cudaEventRecord(ch.ready, ch.stream));
    wait_event(ch.ready, {ch.comm}, std::string("the first message ") + (sender ? "to " : "from ") + peer_name(peer));
  }
}

}  // namespace ptdp
