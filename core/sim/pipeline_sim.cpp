// The pipeline executor: a work list of ranks, each advanced until it blocks on
// a receive or on reduce_tied, woken by the send or partner it waits for. Since
// sends never block, the times do not depend on the order ranks are advanced.
#include "core/sim/pipeline_sim.h"

#include <algorithm>
#include <cstddef>
#include <string>

namespace ptdp {

PipelineCosts zero_costs() {
  return {[](int, const Instr&) { return 0.0; }, [](int, int, const Instr&) { return 0.0; }};
}

namespace {

struct SentMessage {
  Instr send;
  double arrival_s;  // when the receiver may complete the matching receive
};

// The messages from one rank to another, in the order they were sent.
struct Channel {
  int src = -1;
  std::vector<SentMessage> sent;
  std::size_t received = 0;
};

class PipelineSim {
 public:
  PipelineSim(const std::vector<Program>& programs, const PipelineCosts& costs)
      : programs_(programs), costs_(costs), p_(static_cast<int>(programs.size())),
        pc_(programs.size(), 0), clock_(programs.size(), 0.0), events_(programs.size()),
        queued_(programs.size(), 1), waiting_tied_(programs.size(), 0), grad_spans_(programs.size()),
        inbox_(programs.size()) {
    for (int r = 0; r < p_; ++r) {
      ready_.push_back(p_ - 1 - r);  // rank 0 is advanced first
      events_[idx(r)].reserve(programs[idx(r)].size());
    }
  }

  Timeline run() {
    while (!ready_.empty()) {
      const int rank = ready_.back();
      ready_.pop_back();
      queued_[idx(rank)] = 0;
      while (step(rank)) {
      }
    }
    throw_if_stuck();
    Timeline out;
    std::size_t total = 0;
    for (const auto& events : events_) total += events.size();
    out.reserve(total);
    for (auto& events : events_) out.insert(out.end(), events.begin(), events.end());
    return out;
  }

 private:
  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }
  bool done(int rank) const { return pc_[idx(rank)] >= programs_[idx(rank)].size(); }
  const Instr& current(int rank) const { return programs_[idx(rank)][pc_[idx(rank)]]; }
  // The channel src -> dst, opened on first use.
  Channel& channel(int src, int dst) {
    for (Channel& c : inbox_[idx(dst)])
      if (c.src == src) return c;
    return inbox_[idx(dst)].emplace_back(Channel{src, {}, 0});
  }
  std::size_t received(int src, int dst) const {
    for (const Channel& c : inbox_[idx(dst)])
      if (c.src == src) return c.received;
    return 0;
  }

  void wake(int rank) {
    if (queued_[idx(rank)]) return;
    queued_[idx(rank)] = 1;
    ready_.push_back(rank);
  }

  // Places the rank's current instruction at [start, end] and moves on.
  void finish(int rank, double start, double end) {
    events_[idx(rank)].push_back({rank, current(rank), start, end});
    clock_[idx(rank)] = end;
    ++pc_[idx(rank)];
  }

  // Runs the rank's next instruction if it can; false when blocked or done.
  bool step(int rank) {
    if (done(rank)) return false;
    const Instr& instr = current(rank);
    // How each Op runs, indexed by Op (one entry per Op, or it does not compile).
    using Step = bool (PipelineSim::*)(int rank, const Instr&);
    static constexpr OpTable<Step> kStep = op_table<Step>(&PipelineSim::try_receive,  // recv_forward
                                                          &PipelineSim::run_local,    // forward
                                                          &PipelineSim::send,         // send_forward
                                                          &PipelineSim::try_receive,  // recv_backward
                                                          &PipelineSim::run_local,    // backward
                                                          &PipelineSim::send,         // send_backward
                                                          &PipelineSim::run_local,    // backward_input
                                                          &PipelineSim::run_local,    // backward_weight
                                                          &PipelineSim::reduce_tied,  // reduce_tied
                                                          &PipelineSim::reduce_grads, // reduce_grads
                                                          &PipelineSim::run_local);   // optimizer_step
    return (this->*kStep[op_index(instr.op)])(rank, instr);
  }

  // A local instruction: occupies the rank for its duration.
  bool run_local(int rank, const Instr& instr) {
    const double t = clock_[idx(rank)];
    finish(rank, t, t + costs_.duration(rank, instr));
    if (ends_gradients(instr.op) && instr.chunk >= 0) note_grad_span(rank, instr, t);
    return true;
  }

  // Keeps the latest gradient-completing span of each chunk: the last one wins.
  void note_grad_span(int rank, const Instr& instr, double start) {
    std::vector<GradSpan>& spans = grad_spans_[idx(rank)];
    if (spans.size() <= idx(instr.chunk)) spans.resize(idx(instr.chunk) + 1);
    spans[idx(instr.chunk)] = {instr.op, start, clock_[idx(rank)]};
  }

  // The data-parallel reduction: what the overlapped buckets leave exposed, or its duration.
  bool reduce_grads(int rank, const Instr& instr) {
    if (!costs_.reduce_grads_end) return run_local(rank, instr);
    const double t = clock_[idx(rank)];
    finish(rank, t, std::max(t, costs_.reduce_grads_end(rank, t, grad_spans_[idx(rank)])));
    return true;
  }

  bool send(int rank, const Instr& instr) {
    post(rank, instr);
    return run_local(rank, instr);
  }

  bool reduce_tied(int rank, const Instr& instr) { return p_ > 1 ? try_reduce_tied(rank) : run_local(rank, instr); }


  void check_peer(int rank, const Instr& instr) const {
    if (instr.peer < 0 || instr.peer >= p_)
      throw std::logic_error(where(rank, instr) + " names a peer outside 0.." + std::to_string(p_ - 1));
  }

  void post(int rank, const Instr& send) {
    check_peer(rank, send);
    const double arrival = clock_[idx(rank)] + costs_.transfer(rank, send.peer, send);
    channel(rank, send.peer).sent.push_back({send, arrival});
    wake(send.peer);
  }

  bool try_receive(int rank, const Instr& recv) {
    check_peer(rank, recv);
    Channel& ch = channel(recv.peer, rank);
    if (ch.received >= ch.sent.size()) return false;
    const SentMessage& msg = ch.sent[ch.received++];
    check_match(recv.peer, msg.send, rank, recv);
    const double t = clock_[idx(rank)];
    finish(rank, t, std::max(t, msg.arrival_s));
    return true;
  }

  void check_match(int src, const Instr& send, int dst, const Instr& recv) const {
    if (messages_match(p_, src, send, dst, recv)) return;
    throw std::logic_error("message mismatch: " + where(src, send) + " is matched (in channel order) with " +
                           where(dst, recv));
  }

  // The tied-embedding reduction of ranks 0 and p−1: whoever comes first waits.
  bool try_reduce_tied(int rank) {
    const int partner = tied_partner(p_, rank, current(rank));
    if (!waiting_tied_[idx(partner)]) {
      waiting_tied_[idx(rank)] = 1;
      return false;
    }
    const double start = std::max(clock_[idx(rank)], clock_[idx(partner)]);
    const double end =
        start + std::max(costs_.duration(rank, current(rank)), costs_.duration(partner, current(partner)));
    waiting_tied_[idx(partner)] = 0;
    waiting_tied_[idx(rank)] = 0;
    finish(partner, start, end);
    finish(rank, start, end);
    wake(partner);
    return true;
  }

  std::string stuck_reason(int rank) const {
    const Instr& instr = current(rank);
    const std::size_t got = is_recv(instr.op) ? received(instr.peer, rank) : 0;
    return ptdp::stuck_reason(rank, instr, pc_[idx(rank)], programs_[idx(rank)].size(), got);
  }

  void throw_if_stuck() const {
    std::string msg;
    for (int r = 0; r < p_; ++r)
      if (!done(r)) msg += (msg.empty() ? "" : "; ") + stuck_reason(r);
    if (!msg.empty()) throw DeadlockError("pipeline deadlock: " + msg);
  }

  const std::vector<Program>& programs_;
  const PipelineCosts& costs_;
  int p_;
  std::vector<std::size_t> pc_;                      // next instruction of each rank
  std::vector<double> clock_;                        // when each rank reaches it
  std::vector<std::vector<TimelineEvent>> events_;   // per rank, in program order
  std::vector<char> queued_;                         // rank is on ready_
  std::vector<char> waiting_tied_;                   // rank waits at reduce_tied
  std::vector<std::vector<GradSpan>> grad_spans_;    // per rank, per chunk: its last backward so far
  // Per receiving rank, a channel per sender that has sent to it: O(p) in all,
  // since a rank hears from its neighbour stages only (a p·p table held 3 GB at p = 10^4).
  std::vector<std::vector<Channel>> inbox_;
  std::vector<int> ready_;                           // ranks that may be able to go on
};

}  // namespace

Timeline simulate_pipeline(const std::vector<Program>& programs, const PipelineCosts& costs) {
  return PipelineSim(programs, costs).run();
}

}  // namespace ptdp
