// Mean measured durations per (stage, op, chunk).
#include "core/sim/replay.h"

#include <map>
#include <memory>
#include <tuple>

namespace ptdp {

PipelineCosts costs_from_timeline(const Timeline& measured, int p, const std::function<int(int)>& stage_of) {
  using Key = std::tuple<int, int, int>;  // stage, op, chunk
  auto sums = std::make_shared<std::map<Key, std::pair<double, int>>>();
  for (const auto& e : measured) {
    const int stage = stage_of(e.rank);
    if (stage < 0 || stage >= p || !e.is_instruction()) continue;
    const bool timed = is_compute(e.instr.op) || is_send(e.instr.op);
    if (!timed) continue;
    auto& [sum, n] = (*sums)[{stage, static_cast<int>(e.instr.op), e.instr.chunk}];
    sum += e.end_s - e.start_s;
    ++n;
  }
  PipelineCosts c;
  c.duration = [sums](int rank, const Instr& in) {
    auto it = sums->find({rank, static_cast<int>(in.op), in.chunk});
    return it == sums->end() ? 0.0 : it->second.first / it->second.second;
  };
  c.transfer = [](int, int, const Instr&) { return 0.0; };
  return c;
}

}  // namespace ptdp
