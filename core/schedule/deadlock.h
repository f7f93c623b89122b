// Deadlock runs: the one place that runs ranks' instruction lists in order,
// with no costs, until nothing can move. Two rules of progress use it:
// - order_deadlock: the instructions one by one, as the simulator and the
//   runtime's ungrouped path run them (sends never block, a receive waits for
//   its send, reduce_tied waits for its partner); the schedule checker's run.
// - grouped_steps_deadlock: the runtime's grouped transfer steps
//   (below), where a group ends only when every
//   message in it met its partner in the peer's running group.
// The timed simulator (core/sim/pipeline_sim.h) places the same programs in
// time; it needs no deadlock run of its own beyond its stuck report.
#pragma once
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/schedule/instruction.h"

namespace ptdp {

// Calls advance(rank) for every rank, again and again, until no call moves:
// advance tries to move the rank on and says whether it did. Progress is
// monotone, so the order ranks are tried in does not change where they stop.
void run_until_stuck(int ranks, const std::function<bool(int rank)>& advance);

// Whether a send from pipeline rank src and a receive on rank dst carry the same
// message: same direction, micro-batch, and the virtual stage the send delivers
// to is the one the receive belongs to (p ranks; the peers are not compared).
bool messages_match(int p, int src, const Instr& send, int dst, const Instr& recv);

// "INSTR on rank r", the place named in every message about the lists.
std::string where(int rank, const Instr& instr);

// The other holder of the tied embedding (ranks 0 and p−1) for `rank` at
// reduce_tied `at`; a logic_error when `rank` holds none.
int tied_partner(int p, int rank, const Instr& at);

// Why `rank` cannot move: "rank r stuck at INSTR (instruction pc of n)", and
// for a receive the message it waits for (`received` messages of that channel
// arrived so far), for reduce_tied its partner. Shared by every run of the lists.
std::string stuck_reason(int rank, const Instr& in, std::size_t pc, std::size_t n, std::size_t received);

// Runs one pipeline's programs (index = pipeline rank) instruction by
// instruction, the k-th send from a to b matching the k-th receive on b from a.
// "" when every rank finishes; else "pipeline deadlock: rank r stuck at ..."
// for each stuck rank. Throws std::logic_error when a matched pair disagrees, a
// peer is out of range, or reduce_tied is on a middle rank.
std::string order_deadlock(const std::vector<Program>& programs);

// Transfer steps: the consecutive send/receive instructions of a rank's list
// that the runtime issues together. On NCCL a group is one operation over all
// its streams: it starts once the rank's earlier transfers are done and ends
// only when every message in it met its partner in the peer's running group.
// Whether that can wait in a cycle depends on the schedule (interleaved 1F1B's
// steady state does: its steps do not pair up around the ring), so it is run
// here, not assumed. The end of the run of consecutive transfer instructions
// that starts at `begin` (== begin when program[begin] is not a transfer):
std::size_t transfer_step_end(const Program& program, std::size_t begin);

// Runs the grouped transfer steps of one pipeline's programs, each rank's groups
// one after another, messages of a direction matched in order. "" when every
// group finishes; else the group each stuck rank waits in.
std::string grouped_steps_deadlock(const std::vector<Program>& pipeline);

}  // namespace ptdp
