// Timelines: every instruction a rank ran (or the simulator placed), with start
// and end, in one format for measured and projected runs. From it come the
// measured bubble and a Chrome trace (opens in Perfetto, a track per rank).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/schedule/instruction.h"

namespace ptdp {

struct TimelineEvent {
  int rank = 0;
  Instr instr{Op::forward};
  double start_s = 0;  // seconds from the start of the iteration
  double end_s = 0;
};

using Timeline = std::vector<TimelineEvent>;

// Bubble of one rank: the share of its pipeline phase (from its first
// instruction to the end of its last backward) in which it computes nothing
// (no forward or backward runs). `events` are that rank's, in any order.
double measured_bubble(const Timeline& events);

// Events as flat numbers, for gathering over ranks: 6 doubles per event.
std::vector<double> pack_timeline(const Timeline& events);
Timeline unpack_timeline(const std::vector<double>& packed);

// Chrome trace JSON ("traceEvents", complete events in microseconds, pid 0,
// tid = rank, named by the instruction).
nlohmann::json chrome_trace(const Timeline& events, const std::string& title);

}  // namespace ptdp
