// Instruction names and the shared pieces every schedule builder uses.
#include "core/schedule/instruction.h"

namespace ptdp {

std::string op_name(Op op) { return traits(op).name; }

std::optional<Op> op_from_name(std::string_view name) {
  for (const OpTraits& t : kOpTraits)
    if (name == t.name) return t.op;
  return std::nullopt;
}

std::string to_string(const Instr& i) {
  std::string s = op_name(i.op);
  if (i.mb >= 0) s += "(" + std::to_string(i.mb) + "," + std::to_string(i.chunk) + ")";
  if (i.peer >= 0) s += (is_send(i.op) ? "->" : "<-") + std::to_string(i.peer);
  return s;
}

StagePos next_stage(const ScheduleSpec& s, int rank, int chunk) {
  if (rank + 1 < s.p) return {rank + 1, chunk};
  if (chunk + 1 < s.v) return {0, chunk + 1};
  return {};
}

StagePos prev_stage(const ScheduleSpec& s, int rank, int chunk) {
  if (rank > 0) return {rank - 1, chunk};
  if (chunk > 0) return {s.p - 1, chunk - 1};
  return {};
}

void append_forward(Program& prog, const ScheduleSpec& s, int mb, int chunk) {
  const StagePos prev = prev_stage(s, s.rank, chunk), next = next_stage(s, s.rank, chunk);
  if (prev.valid()) prog.push_back({Op::recv_forward, mb, chunk, prev.rank});
  prog.push_back({Op::forward, mb, chunk});
  if (next.valid()) prog.push_back({Op::send_forward, mb, chunk, next.rank});
}

namespace {
void append_backward_as(Op op, Program& prog, const ScheduleSpec& s, int mb, int chunk) {
  const StagePos prev = prev_stage(s, s.rank, chunk), next = next_stage(s, s.rank, chunk);
  if (next.valid()) prog.push_back({Op::recv_backward, mb, chunk, next.rank});
  prog.push_back({op, mb, chunk});
  if (prev.valid()) prog.push_back({Op::send_backward, mb, chunk, prev.rank});
}
}  // namespace

void append_backward(Program& prog, const ScheduleSpec& s, int mb, int chunk) {
  append_backward_as(Op::backward, prog, s, mb, chunk);
}

void append_backward_input(Program& prog, const ScheduleSpec& s, int mb, int chunk) {
  append_backward_as(Op::backward_input, prog, s, mb, chunk);
}

void append_step(Program& prog, const ScheduleSpec& s) {
  if (s.p > 1 && (s.rank == 0 || s.rank == s.p - 1)) prog.push_back({Op::reduce_tied});
  prog.push_back({Op::reduce_grads});
  prog.push_back({Op::optimizer_step});
}

}  // namespace ptdp
