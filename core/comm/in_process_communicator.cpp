// InProcessCommunicator: a Hub per group holds the rendezvous of collectives
// (two barriers around each: deposit, combine, release) and the mailboxes of
// point-to-point messages keyed by (sender, receiver, tag), FIFO each.
#include "core/comm/in_process_communicator.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

namespace ptdp {

namespace {

struct Hub {
  Hub(int n, double timeout, InProcessLog* log_to)
      : size(n), timeout_s(timeout), log(log_to), slots(static_cast<std::size_t>(n)) {}
  const int size;
  const double timeout_s;
  InProcessLog* const log;  // may be null
  std::mutex mutex;
  std::condition_variable changed;
  long generation = 0;  // barriers passed
  int arrived = 0;
  std::vector<const void*> slots;  // what each rank deposited for the current collective
  std::map<std::tuple<int, int, int>, std::deque<std::vector<char>>> mail;
  std::map<std::pair<long, int>, std::shared_ptr<Hub>> splits;  // (generation, color) → the sub-group's hub

  void barrier(std::unique_lock<std::mutex>& lock, int rank) {
    const long gen = generation;
    if (++arrived == size) {
      arrived = 0;
      ++generation;
      changed.notify_all();
      return;
    }
    if (!changed.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return generation != gen; }))
      throw std::runtime_error("in-process communicator: rank " + std::to_string(rank) + " of " +
                               std::to_string(size) + " waited more than " +
                               std::to_string(static_cast<int>(timeout_s)) + " s for the others at a collective");
  }
};

std::size_t bytes(std::int64_t count, DType type) { return static_cast<std::size_t>(count) * dtype_size(type); }

template <class T>
void combine(T* out, const T* in, std::int64_t n, ReduceOp op) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = op == ReduceOp::sum ? out[i] + in[i] : std::max(out[i], in[i]);
}

// out = op over the blocks of every rank (each at byte `offset` of its deposit).
void reduce_into(std::vector<char>& out, const std::vector<const void*>& slots, std::size_t offset, std::int64_t count,
                 DType type, ReduceOp op) {
  const char* first = static_cast<const char*>(slots[0]) + offset;
  out.assign(first, first + bytes(count, type));
  for (std::size_t r = 1; r < slots.size(); ++r) {
    const void* in = static_cast<const char*>(slots[r]) + offset;
    switch (type) {
      case DType::f32: combine(reinterpret_cast<float*>(out.data()), static_cast<const float*>(in), count, op); break;
      case DType::f64: combine(reinterpret_cast<double*>(out.data()), static_cast<const double*>(in), count, op); break;
      case DType::i32:
        combine(reinterpret_cast<std::int32_t*>(out.data()), static_cast<const std::int32_t*>(in), count, op);
        break;
      default: throw std::invalid_argument("in-process communicator: no reduction over " + dtype_name(type));
    }
  }
}

class InProcessRequest final : public Request {
 public:
  // A receive: copies the first message of `key` into `buf` once it arrived.
  InProcessRequest(std::shared_ptr<Hub> hub, std::tuple<int, int, int> key, void* buf, std::size_t size)
      : hub_(std::move(hub)), key_(key), buf_(buf), size_(size) {}
  InProcessRequest() : done_(true) {}  // a send: the message was copied when posted

  void wait() override {
    if (done_) return;
    std::unique_lock lock(hub_->mutex);
    if (!hub_->changed.wait_for(lock, std::chrono::duration<double>(hub_->timeout_s), [&] { return arrived(); }))
      throw std::runtime_error("in-process communicator: rank " + std::to_string(std::get<1>(key_)) +
                               " waited more than " + std::to_string(static_cast<int>(hub_->timeout_s)) +
                               " s for the message from rank " + std::to_string(std::get<0>(key_)) + " tag " +
                               std::to_string(std::get<2>(key_)));
    take();
  }
  bool test() override {
    if (done_) return true;
    std::unique_lock lock(hub_->mutex);
    if (arrived()) take();
    return done_;
  }

 private:
  bool arrived() const {
    const auto it = hub_->mail.find(key_);
    return it != hub_->mail.end() && !it->second.empty();
  }
  void take() {  // under the hub's lock
    auto& queue = hub_->mail[key_];
    if (queue.front().size() != size_)
      throw std::runtime_error("in-process communicator: message of " + std::to_string(queue.front().size()) +
                               " bytes received into " + std::to_string(size_));
    std::memcpy(buf_, queue.front().data(), size_);
    queue.pop_front();
    done_ = true;
  }
  std::shared_ptr<Hub> hub_;
  std::tuple<int, int, int> key_{};
  void* buf_ = nullptr;
  std::size_t size_ = 0;
  bool done_ = false;
};

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(std::shared_ptr<Hub> hub, int rank) : hub_(std::move(hub)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return hub_->size; }
  std::string backend() const override { return "in-process"; }

  void all_reduce(void* buf, std::int64_t count, DType type, ReduceOp op) override {
    std::vector<char> sum;
    meet(buf, [&](const std::vector<const void*>& slots) { reduce_into(sum, slots, 0, count, type, op); });
    std::memcpy(buf, sum.data(), sum.size());
    this->count(static_cast<std::int64_t>(bytes(count, type)));
  }
  void all_gather(const void* send, void* recv, std::int64_t count, DType type) override {
    const std::size_t block = bytes(count, type);
    std::vector<char> all(block * static_cast<std::size_t>(size()));
    meet(send, [&](const std::vector<const void*>& slots) {
      for (std::size_t r = 0; r < slots.size(); ++r) std::memcpy(all.data() + r * block, slots[r], block);
    });
    std::memcpy(recv, all.data(), all.size());
    this->count(static_cast<std::int64_t>(block));
  }
  void reduce_scatter(const void* send, void* recv, std::int64_t count, DType type, ReduceOp op) override {
    std::vector<char> mine;
    const std::size_t offset = bytes(count, type) * static_cast<std::size_t>(rank_);
    meet(send, [&](const std::vector<const void*>& slots) { reduce_into(mine, slots, offset, count, type, op); });
    std::memcpy(recv, mine.data(), mine.size());
    this->count(static_cast<std::int64_t>(bytes(count, type)) * size());
  }
  void broadcast(void* buf, std::int64_t count, DType type, int root) override {
    std::vector<char> value(bytes(count, type));
    meet(buf, [&](const std::vector<const void*>& slots) {
      std::memcpy(value.data(), slots.at(static_cast<std::size_t>(root)), value.size());
    });
    std::memcpy(buf, value.data(), value.size());
    this->count(static_cast<std::int64_t>(value.size()));
  }
  double all_reduce_host(double value, ReduceOp op) override {
    all_reduce(&value, 1, DType::f64, op);
    return value;
  }
  std::unique_ptr<Request> isend(const void* buf, std::int64_t count, DType type, int peer, int tag) override {
    check_peer(peer);
    const char* p = static_cast<const char*>(buf);
    {
      std::lock_guard lock(hub_->mutex);
      hub_->mail[{rank_, peer, tag}].emplace_back(p, p + bytes(count, type));
    }
    hub_->changed.notify_all();
    this->count(static_cast<std::int64_t>(bytes(count, type)));
    return std::make_unique<InProcessRequest>();
  }
  std::unique_ptr<Request> irecv(void* buf, std::int64_t count, DType type, int peer, int tag) override {
    check_peer(peer);
    return std::make_unique<InProcessRequest>(hub_, std::tuple{peer, rank_, tag}, buf, bytes(count, type));
  }
  void barrier() override {
    meet(nullptr, [](const std::vector<const void*>&) {});
  }
  std::unique_ptr<Communicator> split(int color, int key) override {
    const std::tuple<int, int, int> mine{color, key, rank_};
    std::shared_ptr<Hub> sub;
    int sub_rank = 0;
    meet(&mine, [&](const std::vector<const void*>& slots) {
      std::vector<std::tuple<int, int, int>> members;  // (key, rank) of my color
      for (const void* s : slots) {
        const auto& [c, k, r] = *static_cast<const std::tuple<int, int, int>*>(s);
        if (c == color) members.emplace_back(k, r, 0);
      }
      std::sort(members.begin(), members.end());
      for (std::size_t i = 0; i < members.size(); ++i)
        if (std::get<1>(members[i]) == rank_) sub_rank = static_cast<int>(i);
      std::lock_guard lock(hub_->mutex);
      auto& hub = hub_->splits[{hub_->generation, color}];
      if (!hub) hub = std::make_shared<Hub>(static_cast<int>(members.size()), hub_->timeout_s, hub_->log);
      sub = hub;
    });
    return std::make_unique<InProcessCommunicator>(sub, sub_rank);
  }
  // As NCCL would need them: paired, and only point-to-point inside.
  void group_start() override { ++group_depth_; }
  void group_end() override {
    if (group_depth_ == 0) throw std::logic_error("in-process communicator: group_end without group_start");
    if (--group_depth_ == 0 && hub_->log != nullptr) ++hub_->log->groups;
  }
  [[noreturn]] void abort(const std::string& why) override {
    throw std::runtime_error("in-process communicator, rank " + std::to_string(rank_) + ": abort: " + why);
  }

 private:
  // Deposits `mine`, runs `use` on every rank's deposits once all arrived
  // (without the lock: nobody changes them until all have used them), then
  // waits until every rank is done with them.
  template <class Use>
  void meet(const void* mine, Use use) {
    if (group_depth_ > 0)
      throw std::logic_error("in-process communicator: a collective inside a point-to-point group (NCCL would merge "
                             "it into the group)");
    std::unique_lock lock(hub_->mutex);
    hub_->slots[static_cast<std::size_t>(rank_)] = mine;
    hub_->barrier(lock, rank_);
    const std::vector<const void*> slots = hub_->slots;
    lock.unlock();
    use(slots);
    lock.lock();
    hub_->barrier(lock, rank_);
  }
  void check_peer(int peer) const {
    if (peer < 0 || peer >= size() || peer == rank_)
      throw std::invalid_argument("in-process communicator: rank " + std::to_string(rank_) + " addresses rank " +
                                  std::to_string(peer) + " in a group of " + std::to_string(size()));
  }
  std::shared_ptr<Hub> hub_;
  int rank_;
  int group_depth_ = 0;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_in_process_world(int size, double timeout_s, InProcessLog* log) {
  if (size < 1 || !(timeout_s > 0)) throw std::invalid_argument("in-process world: size ≥ 1 and timeout > 0");
  auto hub = std::make_shared<Hub>(size, timeout_s, log);
  std::vector<std::unique_ptr<Communicator>> world;
  for (int r = 0; r < size; ++r) world.push_back(std::make_unique<InProcessCommunicator>(hub, r));
  return world;
}

}  // namespace ptdp
