// Bubble from a timeline, packing for gathers, and Chrome trace export.
#include "core/metrics/timeline.h"

#include <algorithm>

namespace ptdp {

double measured_bubble(const Timeline& events) {
  double begin = 1e300, end = -1e300, busy = 0;
  for (const auto& e : events) {
    begin = std::min(begin, e.start_s);
    if (e.instr.op == Op::backward) end = std::max(end, e.end_s);
  }
  if (end <= begin) return 0.0;
  for (const auto& e : events)
    if (is_compute(e.instr.op)) busy += std::min(e.end_s, end) - std::max(e.start_s, begin);
  return std::clamp(1.0 - busy / (end - begin), 0.0, 1.0);
}

std::vector<double> pack_timeline(const Timeline& events) {
  std::vector<double> out;
  out.reserve(events.size() * 6);
  for (const auto& e : events) {
    out.insert(out.end(), {static_cast<double>(e.rank), static_cast<double>(e.instr.op), static_cast<double>(e.instr.mb),
                           static_cast<double>(e.instr.chunk), e.start_s, e.end_s});
  }
  return out;
}

Timeline unpack_timeline(const std::vector<double>& packed) {
  Timeline out;
  for (std::size_t i = 0; i + 6 <= packed.size(); i += 6) {
    TimelineEvent e;
    e.rank = static_cast<int>(packed[i]);
    e.instr.op = static_cast<Op>(static_cast<int>(packed[i + 1]));
    e.instr.mb = static_cast<int>(packed[i + 2]);
    e.instr.chunk = static_cast<int>(packed[i + 3]);
    e.start_s = packed[i + 4];
    e.end_s = packed[i + 5];
    out.push_back(e);
  }
  return out;
}

nlohmann::json chrome_trace(const Timeline& events, const std::string& title) {
  nlohmann::json list = nlohmann::json::array();
  std::vector<int> ranks;
  for (const auto& e : events) {
    Instr shown = e.instr;
    shown.peer = -1;
    list.push_back({{"name", to_string(shown)},
                    {"cat", is_compute(e.instr.op) ? "compute" : "communication"},
                    {"ph", "X"},
                    {"pid", 0},
                    {"tid", e.rank},
                    {"ts", e.start_s * 1e6},
                    {"dur", (e.end_s - e.start_s) * 1e6}});
    ranks.push_back(e.rank);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  for (int r : ranks)
    list.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", r},
                    {"args", {{"name", "rank " + std::to_string(r)}}}});
  list.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", title}}}});
  return {{"traceEvents", list}, {"displayTimeUnit", "ms"}};
}

}  // namespace ptdp
