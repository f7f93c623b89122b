// Schedules as data: one rank's iteration is a plain list of instructions, run
// by the runtime (real kernels and transfers) and by the simulator (costs).
// A chunk index is local to the rank; chunk c of pipeline rank r holds virtual
// stage c·p + r. Sends and receives name the peer's pipeline rank.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptdp {

enum class Op : std::uint8_t {
  recv_forward,    // receive the input activation of (mb, chunk) from the previous stage
  forward,         // F(mb, chunk)
  send_forward,    // send the output activation of (mb, chunk) to the next stage
  recv_backward,   // receive the gradient of (mb, chunk)'s output from the next stage
  backward,        // B(mb, chunk): the whole backward, input and weight gradients
  send_backward,   // send the gradient of (mb, chunk)'s input to the previous stage
  backward_input,  // zero bubble: Bi(mb, chunk), the input-gradient half of B; keeps what W needs
  backward_weight, // zero bubble: W(mb, chunk), the deferred weight gradients of that Bi
  reduce_tied,     // sum the tied word-embedding gradients of the first and last stage
  reduce_grads,    // data-parallel all-reduce of all gradients
  optimizer_step,  // clip by the global norm, AdamW
};
// Adding an Op: one row in kOpTraits below, and one entry in each of the four
// tables that dispatch on it: Executor::kRun (core/runtime/executor.cpp), kStep
// (core/sim/pipeline_sim.cpp), kCost (core/sim/cost_model.cpp) and kField
// (core/sim/projector.cpp).
inline constexpr std::size_t kOpCount = 11;

// Which neighbour stage a transfer talks to: the previous stage (upstream) or
// the next one (downstream).
enum class PeerSide : std::uint8_t { none, upstream, downstream };

// What code that only classifies an Op asks, in one row per Op.
struct OpTraits {
  Op op;
  const char* name;  // printed and written to traces; unique ("B" the whole backward, "Bi" its input half)
  bool compute;    // forward or backward: occupies the rank with model math
  bool send;       // hands an activation or gradient to a neighbour stage
  bool recv;       // waits for one from a neighbour stage
  bool forward;    // belongs to the forward pass (activations flow downstream)
  PeerSide peer;   // the neighbour a transfer names
  int slot;        // 0..7 for the per-micro-batch ops (checker tables), -1 else
};

inline constexpr std::array<OpTraits, kOpCount> kOpTraits = {{
    {Op::recv_forward, "recv_forward", false, false, true, true, PeerSide::upstream, 0},
    {Op::forward, "F", true, false, false, true, PeerSide::none, 1},
    {Op::send_forward, "send_forward", false, true, false, true, PeerSide::downstream, 2},
    {Op::recv_backward, "recv_backward", false, false, true, false, PeerSide::downstream, 3},
    {Op::backward, "B", true, false, false, false, PeerSide::none, 4},
    {Op::send_backward, "send_backward", false, true, false, false, PeerSide::upstream, 5},
    {Op::backward_input, "Bi", true, false, false, false, PeerSide::none, 6},
    {Op::backward_weight, "W", true, false, false, false, PeerSide::none, 7},
    {Op::reduce_tied, "reduce_tied", false, false, false, false, PeerSide::none, -1},
    {Op::reduce_grads, "reduce_grads", false, false, false, false, PeerSide::none, -1},
    {Op::optimizer_step, "optimizer_step", false, false, false, false, PeerSide::none, -1},
}};

// Row i describes Op i, for every Op (the table is indexed by the enum).
constexpr bool op_table_in_order() {
  for (std::size_t i = 0; i < kOpCount; ++i)
    if (static_cast<std::size_t>(kOpTraits[i].op) != i) return false;
  return static_cast<std::size_t>(Op::optimizer_step) + 1 == kOpCount;
}
static_assert(op_table_in_order(), "kOpTraits needs one row per Op, in enum order");

constexpr const OpTraits& traits(Op op) { return kOpTraits[static_cast<std::size_t>(op)]; }
constexpr bool is_compute(Op op) { return traits(op).compute; }     // forward or backward
constexpr bool is_send(Op op) { return traits(op).send; }
constexpr bool is_recv(Op op) { return traits(op).recv; }
constexpr bool is_transfer(Op op) { return is_send(op) || is_recv(op); }  // moves data between stages
// After this op the forward's activations of (mb, chunk) are no longer needed
// for the input gradient: the full backward B, or a zero-bubble Bi (whose W keeps
// only the GEMM inputs and output gradients it needs).
constexpr bool ends_activation(Op op) { return op == Op::backward || op == Op::backward_input; }
// After this op (mb, chunk)'s weight gradients are complete: the full
// backward, or a zero-bubble W.
constexpr bool ends_gradients(Op op) { return op == Op::backward || op == Op::backward_weight; }

// A table with one entry per Op, indexed by the Op: executors dispatch through
// one. Build it with op_table, which takes exactly kOpCount entries in enum
// order, so a missing entry is a compile error.
template <class Entry>
using OpTable = std::array<Entry, kOpCount>;
constexpr std::size_t op_index(Op op) { return static_cast<std::size_t>(op); }
template <class Entry, class... Entries>
constexpr OpTable<Entry> op_table(Entries... entries) {
  static_assert(sizeof...(Entries) == kOpCount, "one entry per Op, in enum order");
  return {entries...};
}

struct Instr {
  Op op;
  int mb = -1;     // micro-batch, 0..m-1 (-1 for whole-model steps)
  int chunk = -1;  // local model chunk, 0..v-1
  int peer = -1;   // pipeline rank at the other end of a send or receive
  bool operator==(const Instr&) const = default;
};

using Program = std::vector<Instr>;

// What a schedule is built for: p stages, m micro-batches, v chunks per rank,
// and the pipeline rank whose list is wanted.
struct ScheduleSpec {
  int p = 1;
  int m = 1;
  int v = 1;
  int rank = 0;
};

std::string op_name(Op op);
// The Op whose name (op_name) is `name`; nullopt for any other text.
std::optional<Op> op_from_name(std::string_view name);
std::string to_string(const Instr& instr);  // e.g. "F(3,1)", "send_forward(3,1)->2"

// The stage (pipeline rank, chunk) after / before (rank, chunk) in model order,
// or {-1, -1} at the ends of the model.
struct StagePos {
  int rank = -1;
  int chunk = -1;
  bool valid() const { return rank >= 0; }
};
StagePos next_stage(const ScheduleSpec& s, int rank, int chunk);
StagePos prev_stage(const ScheduleSpec& s, int rank, int chunk);

// Helpers for schedule builders: append the receive, compute and send of one
// forward or backward step of (mb, chunk), with the sends/receives its
// position in the model needs.
void append_forward(Program& prog, const ScheduleSpec& s, int mb, int chunk);
void append_backward(Program& prog, const ScheduleSpec& s, int mb, int chunk);
// Zero bubble: the receive, B (input gradient) and send of (mb, chunk); its W
// is appended separately, later, by the schedule.
void append_backward_input(Program& prog, const ScheduleSpec& s, int mb, int chunk);
// The whole-model steps after the pipeline flush.
void append_step(Program& prog, const ScheduleSpec& s);

}  // namespace ptdp
