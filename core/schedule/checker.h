// Checks of pipeline schedules as data: every rank's list runs each forward and
// backward once, with the sends and receives the model's stage order needs,
// matched across ranks, and the lists together run to the end.
#pragma once
#include <string>
#include <vector>

#include "core/schedule/instruction.h"

namespace ptdp {

struct ScheduleCheck {
  bool ok = true;
  std::vector<std::string> problems;  // each names the rank and the instruction
};

// programs[r] is pipeline rank r's list; spec gives p, m, v (spec.rank is
// ignored). Checks, per rank: F(mb,c) and B(mb,c) exactly once for every
// mb < m, c < v, F before B; recv_forward before F and send_forward after it
// (likewise recv_backward, B, send_backward), present exactly where
// next_stage/prev_stage say, with the right peer. A zero-bubble list runs
// Bi(mb,c), the backward_input (which takes B's place in those rules), and
// exactly one backward_weight W(mb,c) after it on the same rank, and no
// Op::backward. Across ranks: the k-th send
// from a to b matches the k-th receive on b from a, every send is received,
// and the lists run to the end under zero costs (no deadlock).
ScheduleCheck check_schedule(const std::vector<Program>& programs, const ScheduleSpec& spec);

// The most (micro-batch, chunk) pairs whose forward has run and whose backward
// (or B, for a zero-bubble list) has not, at any point of the list: what sets the activation memory.
int max_in_flight(const Program& program);

}  // namespace ptdp
