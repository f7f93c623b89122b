// Interleaved 1F1B (Megatron-LM, Narayanan et al. SC'21 §2.2): each rank holds
// v model chunks and cycles through them in groups of p micro-batches, so the
// flush is v times shorter: bubble (p−1)/(v·m). Needs m a multiple of p.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/schedule/registry.h"

namespace ptdp {

namespace {

// The rank's m·v forward passes (and, separately, its m·v backward passes) are
// numbered k = 0, 1, ... in the order they run. Passes go in rounds of p·v: a
// round takes p consecutive micro-batches through chunk 0, then the same p
// through chunk 1, and so on, so by the time micro-batch j reaches chunk c the
// other p−1 ranks have had p steps of work to hand it over.
struct Pass {
  int mb;
  int chunk;
};

Pass forward_pass(const ScheduleSpec& s, int k) {
  const int round = s.p * s.v, in_round = k % round;
  return {(k / round) * s.p + k % s.p, in_round / s.p};
}

// Backward passes visit the same micro-batches in the same order, but the
// chunks last to first: gradients flow from the model's end to its start.
Pass backward_pass(const ScheduleSpec& s, int k) {
  const Pass f = forward_pass(s, k);
  return {f.mb, s.v - 1 - f.chunk};
}

// How many forward passes run before the first backward. (v−1)·p forwards
// take the first round through every chunk but the last; 2·(p−r−1) more keep
// rank r busy while the first micro-batch's last chunk reaches rank p−1 and its
// gradient comes back. When m == p there is no steady state to gain: all
// forwards, then all backwards.
int warmup_passes(const ScheduleSpec& s, int total) {
  if (s.m == s.p) return total;
  return std::min((s.p - s.rank - 1) * 2 + (s.v - 1) * s.p, total);
}

void append_forward_pass(Program& prog, const ScheduleSpec& s, int k) {
  const Pass pass = forward_pass(s, k);
  append_forward(prog, s, pass.mb, pass.chunk);
}

void append_backward_pass(Program& prog, const ScheduleSpec& s, int k) {
  const Pass pass = backward_pass(s, k);
  append_backward(prog, s, pass.mb, pass.chunk);
}

Program build_interleaved(const ScheduleSpec& s) {
  if (s.p < 1 || s.v < 1 || s.m < 1 || s.m % s.p != 0)
    throw std::invalid_argument("interleaved schedule needs m a multiple of p (m=" + std::to_string(s.m) +
                                ", p=" + std::to_string(s.p) + ", v=" + std::to_string(s.v) + ")");
  const int total = s.m * s.v;
  const int warmup = warmup_passes(s, total);
  Program prog;
  for (int k = 0; k < warmup; ++k) append_forward_pass(prog, s, k);  // warm-up
  for (int i = 0; i < total - warmup; ++i) {                         // steady state
    append_forward_pass(prog, s, warmup + i);
    append_backward_pass(prog, s, i);
  }
  for (int k = total - warmup; k < total; ++k) append_backward_pass(prog, s, k);  // cool-down
  return prog;
}

const ScheduleRegistration kInterleaved({"interleaved",
                                         "interleaved 1F1B: v chunks per rank in rounds of p micro-batches",
                                         build_interleaved, true});

}  // namespace

}  // namespace ptdp
