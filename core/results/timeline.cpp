// Bubble from a timeline, packing for gathers, and Chrome trace export.
#include "core/results/timeline.h"

#include <algorithm>
#include <map>

#include "core/config/json_read.h"

namespace ptdp {
namespace {

// The comm field as a number, for packing: 0 for an instruction.
int comm_code(const std::optional<Collective>& c) { return c ? 1 + static_cast<int>(*c) : 0; }
std::optional<Collective> comm_from_code(int code) {
  if (code == 0) return std::nullopt;
  return static_cast<Collective>(code - 1);
}

// An event's exact fields, its enums by name: "comm" is null for the
// instruction itself, else the collective waited for.
nlohmann::json trace_args(const TimelineEvent& e) {
  return {{"op", op_name(e.instr.op)},
          {"mb", e.instr.mb},
          {"chunk", e.instr.chunk},
          {"group", comm_group_name(e.group)},
          {"comm", e.comm ? nlohmann::json(collective_name(*e.comm)) : nlohmann::json(nullptr)}};
}

// The enum an arg names, refused (naming the arg) when no value has that name.
template <class Enum>
Enum named(const JsonAt& arg, std::optional<Enum> (*from_name)(std::string_view)) {
  const std::optional<Enum> value = from_name(arg.get<std::string>());
  if (!value) arg.refuse("names no " + arg.pointer().substr(arg.pointer().rfind('/') + 1) + " (got " +
                         json_excerpt(arg.value()) + ")");
  return *value;
}

TimelineEvent event_from_trace(const JsonAt& e) {
  const JsonAt a = e.at("args");
  TimelineEvent t;
  t.rank = e.at("tid").get<int>();
  t.instr.op = named<Op>(a.at("op"), op_from_name);
  t.instr.mb = a.at("mb").get<int>();
  t.instr.chunk = a.at("chunk").get<int>();
  t.group = named<CommGroup>(a.at("group"), comm_group_from_name);
  if (const auto comm = a.find("comm")) t.comm = named<Collective>(*comm, collective_from_name);
  t.start_s = e.at("ts").get<double>() * 1e-6;
  t.end_s = t.start_s + e.at("dur").get<double>() * 1e-6;
  return t;
}

}  // namespace

BubbleStats pipeline_bubble(const Timeline& events) {
  BubbleStats stats;
  double begin = 1e300, end = -1e300;
  std::map<int, double> busy;
  for (const auto& e : events) {
    if (!e.is_instruction()) continue;
    begin = std::min(begin, e.start_s);
    if (is_compute(e.instr.op) && e.instr.op != Op::forward) end = std::max(end, e.end_s);
    busy[e.rank] += 0;
  }
  if (end <= begin) return stats;
  for (const auto& e : events)
    if (e.is_instruction() && is_compute(e.instr.op)) busy[e.rank] += std::max(0.0, std::min(e.end_s, end) - std::max(e.start_s, begin));
  const double phase = end - begin;
  for (const auto& [rank, b] : busy) {
    stats.ranks.push_back(rank);
    stats.bubble.push_back(b > 0 ? (phase - b) / b : 0.0);
    stats.idle_share.push_back((phase - b) / phase);
    stats.mean_bubble += stats.bubble.back() / static_cast<double>(busy.size());
    stats.mean_idle_share += stats.idle_share.back() / static_cast<double>(busy.size());
  }
  return stats;
}

std::map<int, TimeSplit> time_split(const Timeline& events) {
  std::map<int, TimeSplit> out;
  for (const auto& e : events) {
    TimeSplit& t = out[e.rank];
    const double d = e.end_s - e.start_s;
    const bool in_compute = is_compute(e.instr.op);
    if (!e.is_instruction()) {
      if (in_compute) t.compute_s -= d, t.comm_wait_s += d;  // other waits lie inside counted instructions
    } else if (in_compute) {
      t.compute_s += d;
    } else if (e.instr.op != Op::optimizer_step) {
      t.comm_wait_s += d;
    }
  }
  return out;
}

std::vector<double> pack_timeline(const Timeline& events) {
  std::vector<double> out;
  out.reserve(events.size() * 8);
  for (const auto& e : events) {
    out.insert(out.end(), {static_cast<double>(e.rank), static_cast<double>(e.instr.op), static_cast<double>(e.instr.mb),
                           static_cast<double>(e.instr.chunk), e.start_s, e.end_s, static_cast<double>(e.group),
                           static_cast<double>(comm_code(e.comm))});
  }
  return out;
}

Timeline unpack_timeline(const std::vector<double>& packed) {
  Timeline out;
  for (std::size_t i = 0; i + 8 <= packed.size(); i += 8) {
    TimelineEvent e;
    e.rank = static_cast<int>(packed[i]);
    e.instr.op = static_cast<Op>(static_cast<int>(packed[i + 1]));
    e.instr.mb = static_cast<int>(packed[i + 2]);
    e.instr.chunk = static_cast<int>(packed[i + 3]);
    e.start_s = packed[i + 4];
    e.end_s = packed[i + 5];
    e.group = static_cast<CommGroup>(static_cast<int>(packed[i + 6]));
    e.comm = comm_from_code(static_cast<int>(packed[i + 7]));
    out.push_back(e);
  }
  return out;
}

nlohmann::json chrome_trace(const Timeline& events, const std::string& title,
                            const std::vector<std::string>& rank_names) {
  nlohmann::json list = nlohmann::json::array();
  std::vector<int> ranks;
  for (const auto& e : events) {
    Instr shown = e.instr;
    shown.peer = -1;
    const std::string name = e.is_instruction()
                                 ? to_string(shown)
                                 : std::string(comm_group_name(e.group)) + " " + collective_name(*e.comm);
    list.push_back({{"name", name},
                    {"cat", e.is_instruction() && is_compute(e.instr.op) ? "compute" : "communication"},
                    {"ph", "X"},
                    {"pid", 0},
                    {"tid", e.rank},
                    {"ts", e.start_s * 1e6},
                    {"dur", (e.end_s - e.start_s) * 1e6},
                    {"args", trace_args(e)}});
    ranks.push_back(e.rank);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  for (int r : ranks) {
    const auto at = static_cast<std::size_t>(r);
    const std::string name = at < rank_names.size() ? rank_names[at] : "rank " + std::to_string(r);
    list.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", r}, {"args", {{"name", name}}}});
  }
  list.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", title}}}});
  return {{"traceEvents", list}, {"displayTimeUnit", "ms"}};
}

}  // namespace ptdp

namespace ptdp {

Timeline timeline_from_chrome_trace(const nlohmann::json& trace, const std::string& source) {
  Timeline out;
  for (const JsonAt& e : JsonAt(trace, source).at("traceEvents").elements()) {
    if (e.get<std::string>("ph", "") != "X" || !e.find("args")) continue;
    out.push_back(event_from_trace(e));
  }
  return out;
}

}  // namespace ptdp
