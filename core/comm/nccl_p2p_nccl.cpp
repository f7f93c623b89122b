// NcclCommunicator's pipeline point-to-point: one 2-rank communicator and
// stream per directed pair of neighbours (prepare_p2p), connected eagerly;
// sends and receives as requests with completion events; the transfers of one
// schedule step grouped (group_start / group_end).
#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "core/comm/nccl_communicator.h"
#include "core/comm/nccl_detail.h"
#include "core/kernels/cuda/cuda_query.h"

namespace ptdp {

using namespace nccl_detail;

namespace {

constexpr int kIdTag = 32001;  // host-communicator tag of the ids of prepare_p2p (≤ MPI's minimum tag bound)

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
