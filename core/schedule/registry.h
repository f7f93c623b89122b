// Schedules by name. Each schedule is one file that registers its builder with
// a static ScheduleRegistration; adding a schedule touches nothing else.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/schedule/instruction.h"

namespace ptdp {

// Builds the pipeline phase of one rank's program (append_step is added by build_program).
using ScheduleBuilder = std::function<Program(const ScheduleSpec&)>;

struct ScheduleInfo {
  std::string name;
  std::string description;
  ScheduleBuilder build;
  bool interleaved = false;  // supports v > 1 (and then needs m a multiple of p)
  // The analytical bubble (idle over busy time per rank) for p, m, v; null:
  // (p−1)/(v·m), the 1F1B family's.
  double (*analytical_bubble)(int p, int m, int v) = nullptr;
};

struct ScheduleRegistration {
  explicit ScheduleRegistration(ScheduleInfo info);
};

// nullptr when no schedule has that name.
const ScheduleInfo* find_schedule(const std::string& name);
std::vector<std::string> schedule_names();

// The whole iteration of one rank: the schedule's pipeline phase, then the
// gradient reductions and the optimizer step. Throws std::invalid_argument for
// an unknown name.
Program build_program(const std::string& schedule, const ScheduleSpec& spec);

// The programs of all p ranks of one pipeline (index = pipeline rank).
std::vector<Program> build_pipeline(const std::string& schedule, int p, int m, int v);

// At most this many instructions in those programs, for any schedule: on each
// of the p ranks a receive, a pass and a send per (micro-batch, chunk) forward
// and backward, and three whole-model steps. Counted without building them;
// saturates at INT64_MAX.
std::int64_t pipeline_instruction_bound(std::int64_t p, std::int64_t m, std::int64_t v);

}  // namespace ptdp
