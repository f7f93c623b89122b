// InProcessDeviceCommunicator: a host in-process communicator (rendezvous,
// host scalars, splits, group bookkeeping) plus a device mailbox per group.
//
// Ownership of a message's bytes: the send allocates a staging buffer
// (cudaMallocAsync on the sender's stream), copies the payload into it on that
// stream and records an event after the copy; the staged message (buffer +
// event) then belongs to the mailbox. The receive that takes it makes its own
// stream wait on the event, copies the staging buffer into the receive buffer
// and frees the staging buffer (cudaFreeAsync), all on the receiver's stream,
// so the free is ordered after the copy that reads it. The sender's buffer is
// therefore free for reuse by its stream's next work as soon as the send is
// posted (a send request is complete at once); the receive buffer must live
// until the receiver's stream has run the copy (as for any stream-ordered op).
// Messages never received are freed with the mailbox (cudaFree synchronizes).
//
// Collectives go through host memory: download on the rank's stream (host wait
// with the deadline), the host communicator's collective, upload. Slow, but only
// tests use this world; groups of one rank never leave the device.
#include <cuda_runtime.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include "core/comm/in_process_device.h"
#include "core/io/poll_wait.h"
#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/cuda_query.h"

namespace ptdp {

namespace {

std::size_t bytes(std::int64_t count, DType type) { return static_cast<std::size_t>(count) * dtype_size(type); }

// Destructor-side CUDA call: reports a failure, never throws.
void report(cudaError_t e, const char* call) {
  if (e != cudaSuccess) std::fprintf(stderr, "ptdp: in-process device communicator: %s failed: %s\n", call,
                                     cuda::describe(e).c_str());
}

struct Staged {
  void* data = nullptr;  // device, from cudaMallocAsync on the sender's stream (null for 0 bytes)
  std::size_t size = 0;
  cudaEvent_t copied = nullptr;  // recorded on the sender's stream after the staging copy
};

// The point-to-point messages of one group, keyed by (sender, receiver, tag), FIFO each.
struct DeviceMail {
  explicit DeviceMail(double timeout) : timeout_s(timeout) {}
  ~DeviceMail() {
    for (auto& [key, queue] : mail)
      for (Staged& m : queue) {
        if (m.data != nullptr) report(cudaFree(m.data), "cudaFree (an unreceived message)");
        report(cudaEventDestroy(m.copied), "cudaEventDestroy (an unreceived message)");
      }
  }
  DeviceMail(const DeviceMail&) = delete;
  DeviceMail& operator=(const DeviceMail&) = delete;
  const double timeout_s;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::tuple<int, int, int>, std::deque<Staged>> mail;
};

// Waits (deadline) until `stream` has run everything queued on it.
void wait_stream(cudaStream_t stream, double timeout_s, int rank, const char* what) {
  std::string failure;
  const bool done = poll_until(timeout_s, [&](long) {
    const QueryResult r = cuda::read_stream(stream);
    if (r.state == QueryState::failed) failure = cuda::describe(r.error);
    return r.state != QueryState::not_ready;
  });
  if (!done || !failure.empty())
    throw std::runtime_error("in-process device communicator: rank " + std::to_string(rank) + ", " + what + ": " +
                             (done ? failure : "the stream did not finish within " +
                                                   std::to_string(static_cast<int>(timeout_s)) + " s"));
}

class DeviceReceive final : public Request {
 public:
  DeviceReceive(std::shared_ptr<DeviceMail> mail, std::tuple<int, int, int> key, void* buf, std::size_t size,
                cudaStream_t stream)
      : mail_(std::move(mail)), key_(key), buf_(buf), size_(size), stream_(stream) {}
  ~DeviceReceive() override {
    if (done_ != nullptr) report(cudaEventDestroy(done_), "cudaEventDestroy");
  }
  DeviceReceive(const DeviceReceive&) = delete;
  DeviceReceive& operator=(const DeviceReceive&) = delete;

  // Host-waits (deadline) only for the sender thread to post the message,
  // never for the GPU: the copy is queued behind the sender's event.
  void order_before_use() override {
    if (queued_) return;
    std::unique_lock lock(mail_->mutex);
    if (!mail_->changed.wait_for(lock, std::chrono::duration<double>(mail_->timeout_s), [&] { return arrived(); }))
      throw std::runtime_error("in-process device communicator: rank " + std::to_string(std::get<1>(key_)) +
                               " waited more than " + std::to_string(static_cast<int>(mail_->timeout_s)) +
                               " s for the message from rank " + std::to_string(std::get<0>(key_)) + " tag " +
                               std::to_string(std::get<2>(key_)));
    queue_copy(take());
  }
  void wait() override {
    order_before_use();
    if (!poll_until(mail_->timeout_s, [&](long) { return ready(); }))
      throw std::runtime_error("in-process device communicator: rank " + std::to_string(std::get<1>(key_)) +
                               ": the copy of a received message did not finish within " +
                               std::to_string(static_cast<int>(mail_->timeout_s)) + " s");
  }
  bool test() override {
    if (!queued_) {
      std::unique_lock lock(mail_->mutex);
      if (!arrived()) return false;
      queue_copy(take());
    }
    return ready();
  }

 private:
  bool arrived() const {  // under the mailbox's lock
    const auto it = mail_->mail.find(key_);
    return it != mail_->mail.end() && !it->second.empty();
  }
  Staged take() {  // under the mailbox's lock
    auto& queue = mail_->mail[key_];
    Staged m = queue.front();
    if (m.size != size_)
      throw std::runtime_error("in-process device communicator: message of " + std::to_string(m.size) +
                               " bytes received into " + std::to_string(size_));
    queue.pop_front();
    return m;
  }
  // On the receiver's stream: wait for the staging copy, copy out, free the staging buffer.
  void queue_copy(Staged m) {
    queued_ = true;
    PTDP_CUDA_CHECK(cudaStreamWaitEvent(stream_, m.copied, 0));
    PTDP_CUDA_CHECK(cudaEventDestroy(m.copied));  // released once the wait no longer needs it
    if (m.data != nullptr) {
      PTDP_CUDA_CHECK(cudaMemcpyAsync(buf_, m.data, size_, cudaMemcpyDeviceToDevice, stream_));
      PTDP_CUDA_CHECK(cudaFreeAsync(m.data, stream_));
    }
    PTDP_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    PTDP_CUDA_CHECK(cudaEventRecord(done_, stream_));
  }
  bool ready() const {
    return query_ready([this] { return cudaEventQuery(done_); }, [] { return cudaGetLastError(); }, cuda::describe,
                       "in-process device communicator: rank " + std::to_string(std::get<1>(key_)) + " receive");
  }
  std::shared_ptr<DeviceMail> mail_;
  std::tuple<int, int, int> key_;
  void* buf_;
  std::size_t size_;
  cudaStream_t stream_;
  bool queued_ = false;
  cudaEvent_t done_ = nullptr;  // recorded after the copy out
};

class InProcessDeviceCommunicator final : public Communicator {
 public:
  InProcessDeviceCommunicator(std::unique_ptr<Communicator> host, std::shared_ptr<DeviceMail> mail)
      : host_(std::move(host)), mail_(std::move(mail)) {}
  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  std::string backend() const override { return "in-process-cuda"; }

  void set_stream(cudaStream_t stream) {
    stream_ = stream;
    has_stream_ = true;
  }

  void all_reduce(void* buf, std::int64_t count, DType type, ReduceOp op) override {
    this->count(static_cast<std::int64_t>(bytes(count, type)));
    if (size() == 1) return;
    std::vector<char> host = download(buf, bytes(count, type));
    host_->all_reduce(host.data(), count, type, op);
    upload(host, buf);
  }
  void all_gather(const void* send, void* recv, std::int64_t count, DType type) override {
    const std::size_t block = bytes(count, type);
    this->count(static_cast<std::int64_t>(block));
    if (size() == 1) return copy_on_stream(send, recv, block);
    std::vector<char> all(block * static_cast<std::size_t>(size()));
    host_->all_gather(download(send, block).data(), all.data(), count, type);
    upload(all, recv);
  }
  void reduce_scatter(const void* send, void* recv, std::int64_t count, DType type, ReduceOp op) override {
    const std::size_t block = bytes(count, type);
    this->count(static_cast<std::int64_t>(block) * size());
    if (size() == 1) return copy_on_stream(send, recv, block);
    std::vector<char> mine(block);
    host_->reduce_scatter(download(send, block * static_cast<std::size_t>(size())).data(), mine.data(), count, type,
                          op);
    upload(mine, recv);
  }
  void broadcast(void* buf, std::int64_t count, DType type, int root) override {
    this->count(static_cast<std::int64_t>(bytes(count, type)));
    if (size() == 1) return;
    std::vector<char> host = download(buf, bytes(count, type));
    host_->broadcast(host.data(), count, type, root);
    upload(host, buf);
  }
  double all_reduce_host(double value, ReduceOp op) override { return host_->all_reduce_host(value, op); }

  std::unique_ptr<Request> isend(const void* buf, std::int64_t count, DType type, int peer, int tag) override {
    check_peer(peer);
    check_stream("isend");
    Staged m;
    m.size = bytes(count, type);
    if (m.size > 0) {
      PTDP_CUDA_CHECK(cudaMallocAsync(&m.data, m.size, stream_));
      PTDP_CUDA_CHECK(cudaMemcpyAsync(m.data, buf, m.size, cudaMemcpyDeviceToDevice, stream_));
    }
    PTDP_CUDA_CHECK(cudaEventCreateWithFlags(&m.copied, cudaEventDisableTiming));
    PTDP_CUDA_CHECK(cudaEventRecord(m.copied, stream_));
    {
      std::lock_guard lock(mail_->mutex);
      mail_->mail[{rank(), peer, tag}].push_back(m);
    }
    mail_->changed.notify_all();
    this->count(static_cast<std::int64_t>(m.size));
    return std::make_unique<CompletedRequest>();  // the staging copy is ordered before the stream's next work
  }
  std::unique_ptr<Request> irecv(void* buf, std::int64_t count, DType type, int peer, int tag) override {
    check_peer(peer);
    check_stream("irecv");
    return std::make_unique<DeviceReceive>(mail_, std::tuple{peer, rank(), tag}, buf, bytes(count, type), stream_);
  }
  void barrier() override { host_->barrier(); }

  // The sub-group's rank 0 makes its mailbox and hands the others a pointer to
  // its local shared_ptr over the host broadcast; the barrier keeps that local
  // alive until every member has copied it.
  std::unique_ptr<Communicator> split(int color, int key) override {
    std::unique_ptr<Communicator> sub = host_->split(color, key);
    std::shared_ptr<DeviceMail> mail;
    if (sub->rank() == 0) mail = std::make_shared<DeviceMail>(mail_->timeout_s);
    std::int64_t address = reinterpret_cast<std::intptr_t>(&mail);
    static_assert(sizeof(address) == 2 * sizeof(std::int32_t));
    sub->broadcast(&address, 2, DType::i32, 0);
    if (sub->rank() != 0) mail = *reinterpret_cast<const std::shared_ptr<DeviceMail>*>(address);
    sub->barrier();
    auto out = std::make_unique<InProcessDeviceCommunicator>(std::move(sub), std::move(mail));
    if (has_stream_) out->set_stream(stream_);
    return out;
  }
  void group_start() override { host_->group_start(); }
  void group_end() override { host_->group_end(); }
  [[noreturn]] void abort(const std::string& why) override {
    throw std::runtime_error("in-process device communicator, rank " + std::to_string(rank()) + ": abort: " + why);
  }

 private:
  void check_peer(int peer) const {
    if (peer < 0 || peer >= size() || peer == rank())
      throw std::invalid_argument("in-process device communicator: rank " + std::to_string(rank()) +
                                  " addresses rank " + std::to_string(peer) + " in a group of " +
                                  std::to_string(size()));
  }
  void check_stream(const char* call) const {
    if (!has_stream_)
      throw std::logic_error(std::string("in-process device communicator: ") + call + " on rank " +
                             std::to_string(rank()) + " before set_in_process_stream");
  }
  void copy_on_stream(const void* src, void* dst, std::size_t n) {
    check_stream("a collective");
    if (n > 0 && src != dst) PTDP_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream_));
  }
  // n bytes of device `src` once the stream's earlier work wrote them.
  std::vector<char> download(const void* src, std::size_t n) {
    check_stream("a collective");
    std::vector<char> host(n);
    if (n > 0) PTDP_CUDA_CHECK(cudaMemcpyAsync(host.data(), src, n, cudaMemcpyDeviceToHost, stream_));
    wait_stream(stream_, mail_->timeout_s, rank(), "download for a collective");
    return host;
  }
  // Waits for the copy: `host` is pageable and dies with the caller.
  void upload(const std::vector<char>& host, void* dst) {
    if (!host.empty()) PTDP_CUDA_CHECK(cudaMemcpyAsync(dst, host.data(), host.size(), cudaMemcpyHostToDevice, stream_));
    wait_stream(stream_, mail_->timeout_s, rank(), "upload after a collective");
  }

  std::unique_ptr<Communicator> host_;
  std::shared_ptr<DeviceMail> mail_;
  cudaStream_t stream_ = nullptr;
  bool has_stream_ = false;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_in_process_device_world(int size, double timeout_s,
                                                                        InProcessLog* log) {
  auto host = make_in_process_world(size, timeout_s, log);  // checks size and timeout
  auto mail = std::make_shared<DeviceMail>(timeout_s);
  std::vector<std::unique_ptr<Communicator>> world;
  for (auto& h : host) world.push_back(std::make_unique<InProcessDeviceCommunicator>(std::move(h), mail));
  return world;
}

void set_in_process_stream(Communicator& comm, cudaStream_t stream) {
  auto* device = dynamic_cast<InProcessDeviceCommunicator*>(&comm);
  if (device == nullptr)
    throw std::logic_error("set_in_process_stream: the " + comm.backend() +
                           " communicator is not an in-process device communicator");
  device->set_stream(stream);
}

}  // namespace ptdp
