// Transfer steps: the consecutive send/receive instructions of a rank's list
// that the executor issues together, and whether grouping them is safe. On
// NCCL a group is one operation over all its streams: it starts once the
// rank's earlier transfers are done and ends only when every message in it met
// its partner in the peer's running group. Whether that can wait in a cycle
// depends on the schedule (interleaved 1F1B's steady state does: its steps do
// not pair up around the ring), so it is simulated, not assumed.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/schedule/instruction.h"

namespace ptdp {

// Whether `op` moves an activation or gradient between pipeline stages.
bool is_transfer(Op op);

// The end of the run of consecutive transfer instructions that starts at
// `begin` (== begin when program[begin] is not a transfer).
std::size_t transfer_step_end(const Program& program, std::size_t begin);

// Runs the grouped transfer steps of one pipeline's programs (index = pipeline
// rank), each rank's groups one after another, messages of a direction matched
// in order. "" when every group finishes; else the group each stuck rank waits in.
std::string grouped_steps_deadlock(const std::vector<Program>& pipeline);

}  // namespace ptdp
