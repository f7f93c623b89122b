// Timelines: every instruction a rank ran (or the simulator placed), with start
// and end, in one format for measured and projected runs. From it come the
// measured bubble and a Chrome trace (opens in Perfetto, a track per rank).
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/topology/comm_kinds.h"
#include "core/schedule/instruction.h"

namespace ptdp {

// An instruction, or (comm set) a collective wait nested inside `instr`.
struct TimelineEvent {
  int rank = 0;
  Instr instr{Op::forward};
  double start_s = 0;  // seconds from the start of the iteration
  double end_s = 0;
  CommGroup group = CommGroup::none;
  std::optional<Collective> comm = std::nullopt;  // none: the instruction itself
  bool is_instruction() const { return !comm.has_value(); }
};

using Timeline = std::vector<TimelineEvent>;

// The pipeline bubble of an iteration, from the events of all its ranks. The
// pipeline phase runs from the first instruction of any rank to the end of the
// last backward of any rank (the flush). For each rank, busy = time inside a
// forward or backward, idle = phase − busy, and
//   bubble = idle / busy       (the paper's t_pb / t_id: (p−1)/m for 1F1B),
//   idle_share = idle / phase  (the share of the phase it computes nothing).
struct BubbleStats {
  std::vector<int> ranks;           // ranks present, ascending
  std::vector<double> bubble;       // per rank, as above
  std::vector<double> idle_share;   // per rank
  double mean_bubble = 0;           // mean over ranks
  double mean_idle_share = 0;
};
BubbleStats pipeline_bubble(const Timeline& events);

// A rank's seconds in an iteration by what it waited for. compute: forward and
// backward instructions less the collective waits recorded inside them (the
// tensor-parallel ones); comm_wait: those waits, plus the pipeline transfers
// and the tied-embedding and gradient reductions. The optimizer step is
// neither. Waits inside instructions are recorded only where ops are
// synchronous (the CPU); on a GPU they stay in compute.
struct TimeSplit {
  double compute_s = 0;
  double comm_wait_s = 0;
};
std::map<int, TimeSplit> time_split(const Timeline& events);  // by rank

// Events as flat numbers, for gathering over ranks: 8 doubles per event
// (rank, op, mb, chunk, start, end, group, comm; comm 0 = an instruction,
// 1 + the Collective otherwise).
std::vector<double> pack_timeline(const Timeline& events);
Timeline unpack_timeline(const std::vector<double>& packed);

// Chrome trace JSON ("traceEvents", complete events in microseconds, pid 0,
// tid = rank, named by the instruction; "args" keep the event exactly, its
// enums by name: "op" (op_name), "group" (comm_group_name) and "comm" (the
// collective waited for, collective_name; null for the instruction). Each
// rank's track is named rank_names[rank] where given (its coordinates and
// host), else "rank N".
nlohmann::json chrome_trace(const Timeline& events, const std::string& title,
                            const std::vector<std::string>& rank_names = {});
// The events of a trace written by chrome_trace (metadata events skipped).
// JsonRefused, naming `source` and the field, for a missing or mistyped field
// or an op, group or collective by a name ptdp does not know.
Timeline timeline_from_chrome_trace(const nlohmann::json& trace, const std::string& source = "trace");

}  // namespace ptdp
