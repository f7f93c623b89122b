// The schedule checker: per-rank tables of where each (op, mb, chunk) sits,
// channel-by-channel matching of sends with receives, and the order run of
// core/schedule/deadlock.h to find deadlocks (no simulator, no costs).
#include "core/schedule/checker.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <utility>

#include "core/schedule/deadlock.h"

namespace ptdp {

namespace {

// A thoroughly broken list would otherwise give thousands of lines.
constexpr std::size_t kMaxProblems = 100;

void report(ScheduleCheck& out, std::string what) {
  out.ok = false;
  if (out.problems.size() < kMaxProblems) out.problems.push_back(std::move(what));
  else if (out.problems.size() == kMaxProblems) out.problems.push_back("(further problems not listed)");
}

// The eight per-micro-batch ops, numbered for the slot table; -1 for whole-model steps.
int op_slot(Op op) { return traits(op).slot; }
constexpr int kSlots = 8;

// Where (op, mb, chunk) sits in one rank's list: how often, and first where.
struct Seen {
  int count = 0;
  std::size_t pos = 0;
};

class RankChecker {
 public:
  RankChecker(const Program& prog, const ScheduleSpec& s, ScheduleCheck& out)
      : prog_(prog), s_(s), out_(out), who_("rank " + std::to_string(s.rank) + ": "),
        seen_(static_cast<std::size_t>(kSlots * s.m * s.v)) {}

  void run() {
    for (std::size_t i = 0; i < prog_.size(); ++i) note(prog_[i], i);
    split_ = std::any_of(prog_.begin(), prog_.end(), [](const Instr& in) {
      return in.op == Op::backward_input || in.op == Op::backward_weight;
    });
    for (int mb = 0; mb < s_.m; ++mb)
      for (int c = 0; c < s_.v; ++c) check_pass(mb, c);
  }

 private:
  Seen& at(Op op, int mb, int chunk) {
    return seen_[static_cast<std::size_t>((op_slot(op) * s_.m + mb) * s_.v + chunk)];
  }

  // The peer rank a send or receive of `op` on `chunk` must name (-1: none exists).
  int expected_peer(Op op, int chunk) const {
    const bool upstream = traits(op).peer == PeerSide::upstream;
    return (upstream ? prev_stage(s_, s_.rank, chunk) : next_stage(s_, s_.rank, chunk)).rank;
  }

  void note(const Instr& in, std::size_t i) {
    if (op_slot(in.op) < 0) return;
    if (in.mb < 0 || in.mb >= s_.m || in.chunk < 0 || in.chunk >= s_.v) {
      report(out_, who_ + to_string(in) + " (instruction " + std::to_string(i) + ") is outside m=" +
                       std::to_string(s_.m) + ", v=" + std::to_string(s_.v));
      return;
    }
    const int peer = expected_peer(in.op, in.chunk);
    if (is_transfer(in.op) && peer >= 0 && in.peer != peer)
      report(out_, who_ + to_string(in) + " (instruction " + std::to_string(i) +
                       ") names the wrong peer; expected rank " + std::to_string(peer));
    Seen& e = at(in.op, in.mb, in.chunk);
    if (e.count++ == 0) e.pos = i;
  }

  std::string name(Op op, int mb, int chunk) const {
    return to_string(Instr{op, mb, chunk, is_compute(op) ? -1 : expected_peer(op, chunk)});
  }

  void check_once(Op op, int mb, int c, int expected) {
    const int n = at(op, mb, c).count;
    if (n == expected) return;
    report(out_, who_ + name(op, mb, c) + " appears " + std::to_string(n) + " times, expected " +
                     std::to_string(expected) + (expected == 0 ? " (no stage on that side)" : ""));
  }

  // `first` must come before `second` in the list, when both appear once.
  void check_order(Op first, Op second, int mb, int c) {
    const Seen &a = at(first, mb, c), &b = at(second, mb, c);
    if (a.count != 1 || b.count != 1 || a.pos < b.pos) return;
    report(out_, who_ + name(second, mb, c) + " (instruction " + std::to_string(b.pos) + ") comes before " +
                     name(first, mb, c) + " (instruction " + std::to_string(a.pos) + ")");
  }

  // A rank's list either runs each backward whole (Op::backward) or split
  // (zero bubble: Bi = backward_input, then W = backward_weight), never both.
  void check_pass(int mb, int c) {
    const int has_prev = prev_stage(s_, s_.rank, c).valid() ? 1 : 0;
    const int has_next = next_stage(s_, s_.rank, c).valid() ? 1 : 0;
    const Op b = split_ ? Op::backward_input : Op::backward;  // what sends the input gradient
    check_once(Op::forward, mb, c, 1);
    check_once(Op::backward, mb, c, split_ ? 0 : 1);
    check_once(Op::backward_input, mb, c, split_ ? 1 : 0);
    check_once(Op::backward_weight, mb, c, split_ ? 1 : 0);
    check_once(Op::recv_forward, mb, c, has_prev);
    check_once(Op::send_forward, mb, c, has_next);
    check_once(Op::recv_backward, mb, c, has_next);
    check_once(Op::send_backward, mb, c, has_prev);
    check_order(Op::forward, b, mb, c);
    check_order(Op::recv_forward, Op::forward, mb, c);
    check_order(Op::forward, Op::send_forward, mb, c);
    check_order(Op::recv_backward, b, mb, c);
    check_order(b, Op::send_backward, mb, c);
    if (split_) check_order(Op::backward_input, Op::backward_weight, mb, c);
  }

  const Program& prog_;
  const ScheduleSpec& s_;
  ScheduleCheck& out_;
  std::string who_;
  std::vector<Seen> seen_;  // kSlots · m · v
  bool split_ = false;      // the list splits backwards into B and W
};

std::string on(int rank, const Instr& in) { return to_string(in) + " on rank " + std::to_string(rank); }

// The messages of one channel (src → dst), in program order.
struct ChannelLists {
  std::vector<const Instr*> sends, recvs;
};

void check_channel(int p, int src, int dst, const ChannelLists& ch, ScheduleCheck& out) {
  const std::string name = "channel " + std::to_string(src) + "->" + std::to_string(dst) + ", message ";
  const std::size_t n = std::min(ch.sends.size(), ch.recvs.size());
  for (std::size_t k = 0; k < n; ++k) {
    if (messages_match(p, src, *ch.sends[k], dst, *ch.recvs[k])) continue;
    report(out, name + std::to_string(k) + ": " + on(src, *ch.sends[k]) + " is matched with " + on(dst, *ch.recvs[k]));
    return;  // the rest of the channel is shifted; one line says it
  }
  if (ch.sends.size() > n)
    report(out, name + std::to_string(n) + ": " + on(src, *ch.sends[n]) + " has no matching receive (" +
                    std::to_string(ch.sends.size() - n) + " unreceived)");
  if (ch.recvs.size() > n)
    report(out, name + std::to_string(n) + ": " + on(dst, *ch.recvs[n]) + " has no matching send (" +
                    std::to_string(ch.recvs.size() - n) + " unsent)");
}

// True when every channel matched.
bool check_channels(const std::vector<Program>& programs, ScheduleCheck& out) {
  const int p = static_cast<int>(programs.size());
  std::map<std::pair<int, int>, ChannelLists> channels;
  for (int r = 0; r < p; ++r)
    for (const Instr& in : programs[static_cast<std::size_t>(r)]) {
      if (in.peer < 0 || in.peer >= p) continue;  // reported by the rank check
      if (is_send(in.op)) channels[{r, in.peer}].sends.push_back(&in);
      if (is_recv(in.op)) channels[{in.peer, r}].recvs.push_back(&in);
    }
  const std::size_t before = out.problems.size();
  for (const auto& [ends, lists] : channels) check_channel(p, ends.first, ends.second, lists, out);
  return out.problems.size() == before;
}

void check_runs(const std::vector<Program>& programs, bool channels_ok, ScheduleCheck& out) {
  try {
    const std::string stuck = order_deadlock(programs);
    if (!stuck.empty()) report(out, stuck);
  } catch (const std::logic_error& e) {
    if (channels_ok) report(out, std::string("cannot run: ") + e.what());  // else already reported
  }
}

}  // namespace

ScheduleCheck check_schedule(const std::vector<Program>& programs, const ScheduleSpec& spec) {
  ScheduleCheck out;
  if (static_cast<int>(programs.size()) != spec.p || spec.m < 1 || spec.v < 1) {
    report(out, std::to_string(programs.size()) + " programs for p=" + std::to_string(spec.p) +
                    ", m=" + std::to_string(spec.m) + ", v=" + std::to_string(spec.v));
    return out;
  }
  for (int r = 0; r < spec.p; ++r) {
    ScheduleSpec s = spec;
    s.rank = r;
    RankChecker(programs[static_cast<std::size_t>(r)], s, out).run();
  }
  const bool channels_ok = check_channels(programs, out);
  check_runs(programs, channels_ok, out);
  return out;
}

int max_in_flight(const Program& program) {
  int now = 0, most = 0;
  for (const Instr& in : program) {
    if (in.op == Op::forward) most = std::max(most, ++now);
    if (ends_activation(in.op)) --now;
  }
  return most;
}

}  // namespace ptdp
