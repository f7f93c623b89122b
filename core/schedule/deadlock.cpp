// Deadlock runs over the instruction lists (see deadlock.h). The order run keeps
// per-channel counts of sent messages; the grouped run gives each message end
// its rank and group: a message moves when both ends' groups run at once, a
// group finishes when all its messages moved.
#include "core/schedule/deadlock.h"

#include <cstddef>
#include <map>
#include <utility>

namespace ptdp {

void run_until_stuck(int ranks, const std::function<bool(int rank)>& advance) {
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < ranks; ++r)
      while (advance(r)) moved = true;
  }
}

bool messages_match(int p, int src, const Instr& send, int dst, const Instr& recv) {
  const bool forward = traits(send.op).forward;
  if (forward != traits(recv.op).forward || send.mb != recv.mb) return false;
  // The stage after c·p + r is c·p + r + 1 whatever v is, so v is not needed.
  return send.chunk * p + src + (forward ? 1 : -1) == recv.chunk * p + dst;
}

std::size_t transfer_step_end(const Program& program, std::size_t begin) {
  std::size_t end = begin;
  while (end < program.size() && is_transfer(program[end].op)) ++end;
  return end;
}

namespace {

// The instruction-by-instruction run: sends never block, a receive takes the
// next message of its channel, reduce_tied meets its partner.
class OrderRun {
 public:
  explicit OrderRun(const std::vector<Program>& programs)
      : programs_(programs), p_(static_cast<int>(programs.size())), pc_(programs.size(), 0),
        waiting_tied_(programs.size(), 0), sent_(programs.size() * programs.size()),
        received_(programs.size() * programs.size(), 0) {}

  std::string run() {
    run_until_stuck(p_, [this](int rank) { return advance(rank); });
    std::string msg;
    for (int r = 0; r < p_; ++r)
      if (!done(r)) msg += (msg.empty() ? "" : "; ") + stuck_reason(r);
    return msg.empty() ? msg : "pipeline deadlock: " + msg;
  }

 private:
  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }
  std::size_t channel(int src, int dst) const { return idx(src) * idx(p_) + idx(dst); }
  bool done(int rank) const { return pc_[idx(rank)] >= programs_[idx(rank)].size(); }
  const Instr& current(int rank) const { return programs_[idx(rank)][pc_[idx(rank)]]; }

  void check_peer(int rank, const Instr& in) const {
    if (in.peer < 0 || in.peer >= p_)
      throw std::logic_error(where(rank, in) + " names a peer outside 0.." + std::to_string(p_ - 1));
  }

  bool advance(int rank) {
    if (done(rank)) return false;
    const Instr& in = current(rank);
    if (is_recv(in.op)) {
      check_peer(rank, in);
      const std::size_t ch = channel(in.peer, rank);
      if (received_[ch] >= sent_[ch].size()) return false;
      const Instr& send = *sent_[ch][received_[ch]++];
      if (!messages_match(p_, in.peer, send, rank, in))
        throw std::logic_error("message mismatch: " + where(in.peer, send) +
                               " is matched (in channel order) with " + where(rank, in));
    } else if (is_send(in.op)) {
      check_peer(rank, in);
      sent_[channel(rank, in.peer)].push_back(&in);
    } else if (in.op == Op::reduce_tied && p_ > 1) {
      return meet_tied(rank);
    }
    ++pc_[idx(rank)];
    return true;
  }

  // The tied-embedding reduction of ranks 0 and p−1: whoever comes first waits.
  bool meet_tied(int rank) {
    const int partner = tied_partner(p_, rank, current(rank));
    if (!waiting_tied_[idx(partner)]) {
      waiting_tied_[idx(rank)] = 1;
      return false;
    }
    waiting_tied_[idx(partner)] = 0;
    ++pc_[idx(partner)];
    ++pc_[idx(rank)];
    return true;
  }

  std::string stuck_reason(int rank) const {
    const Instr& in = current(rank);
    const std::size_t received = is_recv(in.op) ? received_[channel(in.peer, rank)] : 0;
    return ptdp::stuck_reason(rank, in, pc_[idx(rank)], programs_[idx(rank)].size(), received);
  }

  const std::vector<Program>& programs_;
  int p_;
  std::vector<std::size_t> pc_;                  // next instruction of each rank
  std::vector<char> waiting_tied_;               // rank waits at reduce_tied
  std::vector<std::vector<const Instr*>> sent_;  // per channel src·p + dst, in send order
  std::vector<std::size_t> received_;            // per channel: messages taken
};

using Direction = std::pair<int, int>;  // (sender, receiver)

struct End {
  int rank = 0;
  std::size_t group = 0;  // index among the rank's groups
};

struct Message {
  End send, recv;
  bool moved = false;
};

struct Group {
  std::vector<std::pair<Direction, std::size_t>> messages;  // (direction, index in it)
  std::string name;
};

struct Pipeline {
  std::map<Direction, std::vector<Message>> messages;
  std::vector<std::vector<Group>> groups;  // per rank
};

// Adds one end of a message of direction d; the k-th send meets the k-th receive.
std::size_t add_end(std::vector<Message>& list, std::map<Direction, std::size_t>& count, Direction d, End e,
                    bool send) {
  const std::size_t k = count[d]++;
  if (list.size() <= k) list.resize(k + 1, Message{{-1, 0}, {-1, 0}});
  (send ? list[k].send : list[k].recv) = e;
  return k;
}

Pipeline build(const std::vector<Program>& pipeline) {
  Pipeline out;
  out.groups.resize(pipeline.size());
  std::map<Direction, std::size_t> sends, recvs;
  for (std::size_t r = 0; r < pipeline.size(); ++r) {
    const Program& prog = pipeline[r];
    const int rank = static_cast<int>(r);
    for (std::size_t i = 0; i < prog.size();) {
      const std::size_t end = transfer_step_end(prog, i);
      if (end == i) {
        ++i;
        continue;
      }
      Group g;
      for (; i < end; ++i) {
        const Instr& in = prog[i];
        const bool send = is_send(in.op);
        const Direction d = send ? Direction{rank, in.peer} : Direction{in.peer, rank};
        const End e{rank, out.groups[r].size()};
        g.messages.push_back({d, add_end(out.messages[d], send ? sends : recvs, d, e, send)});
        g.name += to_string(in) + " ";
      }
      out.groups[r].push_back(std::move(g));
    }
  }
  return out;
}

}  // namespace

std::string where(int rank, const Instr& instr) { return to_string(instr) + " on rank " + std::to_string(rank); }

int tied_partner(int p, int rank, const Instr& at) {
  if (rank != 0 && rank != p - 1)
    throw std::logic_error(where(rank, at) + ": only ranks 0 and p-1 hold tied embeddings");
  return rank == 0 ? p - 1 : 0;
}

std::string stuck_reason(int rank, const Instr& in, std::size_t pc, std::size_t n, std::size_t received) {
  std::string why = "rank " + std::to_string(rank) + " stuck at " + to_string(in) + " (instruction " +
                    std::to_string(pc) + " of " + std::to_string(n) + ")";
  if (is_recv(in.op))
    why += ", waiting for message " + std::to_string(received) + " from rank " + std::to_string(in.peer);
  if (in.op == Op::reduce_tied) why += ", waiting for its partner's reduce_tied";
  return why;
}

std::string order_deadlock(const std::vector<Program>& programs) { return OrderRun(programs).run(); }

std::string grouped_steps_deadlock(const std::vector<Program>& pipeline) {
  Pipeline pl = build(pipeline);
  for (const auto& [d, list] : pl.messages)
    for (const Message& m : list)
      if (m.send.rank < 0 || m.recv.rank < 0)
        return "a message " + std::to_string(d.first) + "->" + std::to_string(d.second) + " has no partner";
  std::vector<std::size_t> running(pipeline.size(), 0);  // each rank's current group
  const auto runs = [&](const End& e) { return running[static_cast<std::size_t>(e.rank)] == e.group; };
  run_until_stuck(static_cast<int>(pipeline.size()), [&](int rank) {
    const std::size_t r = static_cast<std::size_t>(rank);
    if (running[r] == pl.groups[r].size()) return false;
    bool finished = true;
    for (const auto& [d, k] : pl.groups[r][running[r]].messages) {
      Message& m = pl.messages[d][k];
      if (runs(m.send) && runs(m.recv)) m.moved = true;
      finished = finished && m.moved;
    }
    if (finished) ++running[r];
    return finished;
  });
  std::string stuck;
  for (std::size_t r = 0; r < pipeline.size(); ++r)
    if (running[r] < pl.groups[r].size())
      stuck += "rank " + std::to_string(r) + " waits in { " + pl.groups[r][running[r]].name + "}; ";
  return stuck;
}

}  // namespace ptdp
