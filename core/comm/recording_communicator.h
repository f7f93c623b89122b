// A Communicator that records how long each collective of its group took, so
// the timeline shows the tensor-, data- and pipeline-parallel waits nested in
// the instructions that issued them. Wraps any backend; adds no communication.
#pragma once
#include <chrono>
#include <cstdlib>
#include <memory>
#include <vector>

#include "core/topology/comm_kinds.h"
#include "core/comm/communicator.h"

namespace ptdp {

struct CommWait {
  CommGroup group = CommGroup::none;
  Collective op = Collective::all_reduce;
  double start_s = 0, end_s = 0;  // seconds from the recorder's origin
};

// Collects the waits of all recording communicators of a rank while active.
class CommRecorder {
 public:
  void start(std::chrono::steady_clock::time_point origin) {
    origin_ = origin;
    active_ = true;
    waits_.clear();
  }
  void stop() { active_ = false; }
  // The waits recorded since the last call.
  std::vector<CommWait> drain() {
    std::vector<CommWait> out;
    out.swap(waits_);
    return out;
  }
  bool active() const { return active_; }
  double seconds(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double>(t - origin_).count();
  }
  void add(const CommWait& w) { waits_.push_back(w); }

 private:
  std::chrono::steady_clock::time_point origin_{};
  bool active_ = false;
  std::vector<CommWait> waits_;
};

class RecordingCommunicator final : public Communicator {
 public:
  RecordingCommunicator(std::unique_ptr<Communicator> inner, CommGroup group, CommRecorder& recorder)
      : inner_(std::move(inner)), group_(group), recorder_(recorder) {}

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string backend() const override { return inner_->backend(); }
  const CommStats& stats() const override { return inner_->stats(); }
  void all_reduce(void* buf, std::int64_t count, DType type, ReduceOp op) override {
    timed(Collective::all_reduce, [&] { inner_->all_reduce(buf, count, type, op); });
  }
  void all_gather(const void* send, void* recv, std::int64_t count, DType type) override {
    timed(Collective::all_gather, [&] { inner_->all_gather(send, recv, count, type); });
  }
  void reduce_scatter(const void* send, void* recv, std::int64_t count, DType type, ReduceOp op) override {
    timed(Collective::reduce_scatter, [&] { inner_->reduce_scatter(send, recv, count, type, op); });
  }
  void broadcast(void* buf, std::int64_t count, DType type, int root) override {
    timed(Collective::broadcast, [&] { inner_->broadcast(buf, count, type, root); });
  }
  double all_reduce_host(double value, ReduceOp op) override { return inner_->all_reduce_host(value, op); }
  std::unique_ptr<Request> all_reduce_overlapped(void* buf, std::int64_t count, DType type, ReduceOp op) override {
    std::unique_ptr<Request> r;
    timed(Collective::all_reduce, [&] { r = inner_->all_reduce_overlapped(buf, count, type, op); });
    return r;
  }
  std::unique_ptr<Request> reduce_scatter_overlapped(const void* send, void* recv, std::int64_t count, DType type,
                                                     ReduceOp op) override {
    std::unique_ptr<Request> r;
    timed(Collective::reduce_scatter, [&] { r = inner_->reduce_scatter_overlapped(send, recv, count, type, op); });
    return r;
  }
  std::unique_ptr<Request> all_gather_overlapped(const void* send, void* recv, std::int64_t count,
                                                 DType type) override {
    std::unique_ptr<Request> r;
    timed(Collective::all_gather, [&] { r = inner_->all_gather_overlapped(send, recv, count, type); });
    return r;
  }
  std::unique_ptr<Request> isend(const void* buf, std::int64_t count, DType type, int peer, int tag) override {
    return inner_->isend(buf, count, type, peer, tag);
  }
  std::unique_ptr<Request> irecv(void* buf, std::int64_t count, DType type, int peer, int tag) override {
    return inner_->irecv(buf, count, type, peer, tag);
  }
  void barrier() override { inner_->barrier(); }
  void group_start() override { inner_->group_start(); }
  void group_end() override { inner_->group_end(); }
  void prepare_p2p(const std::vector<int>& peers) override { inner_->prepare_p2p(peers); }
  std::unique_ptr<Communicator> split(int color, int key) override { return inner_->split(color, key); }
  [[noreturn]] void abort(const std::string& why) override {
    inner_->abort(why);
    std::abort();  // not reached: the inner abort ends the process
  }

 private:
  template <class F>
  void timed(Collective op, F&& f) {
    if (!recorder_.active()) return f();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    recorder_.add({group_, op, recorder_.seconds(t0), recorder_.seconds(std::chrono::steady_clock::now())});
  }
  std::unique_ptr<Communicator> inner_;
  CommGroup group_;
  CommRecorder& recorder_;
};

}  // namespace ptdp
