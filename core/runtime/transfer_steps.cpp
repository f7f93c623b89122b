// Transfer steps and the simulation of grouped steps: each message end knows
// its rank and group; a message moves when both ends' groups run at once; a
// group finishes when all its messages moved.
#include "core/runtime/transfer_steps.h"

#include <map>
#include <utility>

namespace ptdp {

bool is_transfer(Op op) {
  return op == Op::recv_forward || op == Op::send_forward || op == Op::recv_backward || op == Op::send_backward;
}

std::size_t transfer_step_end(const Program& program, std::size_t begin) {
  std::size_t end = begin;
  while (end < program.size() && is_transfer(program[end].op)) ++end;
  return end;
}

namespace {

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
        const bool send = in.op == Op::send_forward || in.op == Op::send_backward;
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

std::string grouped_steps_deadlock(const std::vector<Program>& pipeline) {
  Pipeline pl = build(pipeline);
  for (const auto& [d, list] : pl.messages)
    for (const Message& m : list)
      if (m.send.rank < 0 || m.recv.rank < 0)
        return "a message " + std::to_string(d.first) + "->" + std::to_string(d.second) + " has no partner";
  std::vector<std::size_t> running(pipeline.size(), 0);  // each rank's current group
  const auto runs = [&](const End& e) { return running[static_cast<std::size_t>(e.rank)] == e.group; };
  for (bool moved = true; moved;) {
    moved = false;
    for (std::size_t r = 0; r < pipeline.size(); ++r) {
      if (running[r] == pl.groups[r].size()) continue;
      bool finished = true;
      for (const auto& [d, k] : pl.groups[r][running[r]].messages) {
        Message& m = pl.messages[d][k];
        if (runs(m.send) && runs(m.recv)) m.moved = true;
        finished = finished && m.moved;
      }
      if (finished) {
        ++running[r];
        moved = true;
      }
    }
  }
  std::string stuck;
  for (std::size_t r = 0; r < pipeline.size(); ++r)
    if (running[r] < pl.groups[r].size())
      stuck += "rank " + std::to_string(r) + " waits in { " + pl.groups[r][running[r]].name + "}; ";
  return stuck;
}

}  // namespace ptdp
