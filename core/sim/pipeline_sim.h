// A discrete-event executor of one pipeline's programs (index = pipeline rank):
// runs the same instruction lists as the runtime, with times from a cost
// model, and returns the timeline they would produce.
#pragma once
#include <functional>
#include <stdexcept>
#include <vector>

#include "core/results/timeline.h"
#include "core/schedule/deadlock.h"
#include "core/schedule/instruction.h"

namespace ptdp {

// The span of a chunk's last gradient-completing instruction on a rank (a
// backward, or a zero-bubble W: ends_gradients); start_s < 0 when it has none.
struct GradSpan {
  Op op = Op::backward;
  double start_s = -1, end_s = -1;
};

struct PipelineCosts {
  // Time an instruction occupies its rank: forward, backward, reduce_tied,
  // reduce_grads, optimizer_step, and sends (the sender's share). Not asked for
  // receives, whose time is the wait for their data.
  std::function<double(int rank, const Instr&)> duration;
  // From a send's start until the receiver may complete the matching receive.
  std::function<double(int src, int dst, const Instr& send)> transfer;
  // Optional (overlap_grad_reduce, cost_model's DpOverlap): when reduce_grads,
  // reached at `now` on `rank`, ends, given the rank's GradSpan per chunk (its
  // last backwards, all run by then). Empty: now + duration.
  std::function<double(int rank, double now, const std::vector<GradSpan>& last)> reduce_grads_end = {};
};

// Every duration and transfer zero: the executor then only checks that the
// programs can run to the end.
PipelineCosts zero_costs();

// Some rank can never go on. The message names each stuck rank's instruction.
class DeadlockError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// messages_match (which send a receive takes) is in core/schedule/deadlock.h.

// Runs programs[r] as pipeline rank r, all starting at time 0:
// - sends never block: the sender goes on after the send's duration;
// - a receive waits until its matching send has started and the transfer has
//   elapsed; its event spans from when the rank reached it until the data came;
// - reduce_tied is a collective of ranks 0 and p−1 (local when p == 1): it
//   starts when both reached it and takes the longer of their two durations;
// - reduce_grads and optimizer_step are local; reduce_grads ends at
//   costs.reduce_grads_end when that is given.
// The k-th send from rank a to rank b matches the k-th receive on b from a.
// Returns one event per instruction, rank by rank in program order.
// Throws std::logic_error when a matched pair disagrees (direction, micro-batch
// or destination virtual stage), a peer is out of range, or reduce_tied is on a
// middle rank; DeadlockError when some rank can never finish.
// Cost: O(instructions) plus one cost call per instruction.
Timeline simulate_pipeline(const std::vector<Program>& programs, const PipelineCosts& costs);

}  // namespace ptdp
