// Schedules as data: one rank's iteration is a plain list of instructions, run
// by the runtime (real kernels and transfers) and by the simulator (costs).
// A chunk index is local to the rank; chunk c of pipeline rank r holds virtual
// stage c·p + r. Sends and receives name the peer's pipeline rank.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ptdp {

enum class Op : std::uint8_t {
  recv_forward,    // receive the input activation of (mb, chunk) from the previous stage
  forward,         // F(mb, chunk)
  send_forward,    // send the output activation of (mb, chunk) to the next stage
  recv_backward,   // receive the gradient of (mb, chunk)'s output from the next stage
  backward,        // B(mb, chunk)
  send_backward,   // send the gradient of (mb, chunk)'s input to the previous stage
  reduce_tied,     // sum the tied word-embedding gradients of the first and last stage
  reduce_grads,    // data-parallel all-reduce of all gradients
  optimizer_step,  // clip by the global norm, AdamW
};

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
std::string to_string(const Instr& instr);  // e.g. "F(3,1)", "send_forward(3,1)->2"
bool is_compute(Op op);                     // forward or backward

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
// The whole-model steps after the pipeline flush.
void append_step(Program& prog, const ScheduleSpec& s);

}  // namespace ptdp
