// The executor: runs one rank's instruction list for one iteration on its model
// chunks, with real transfers between pipeline stages (activations forward,
// gradients backward; optionally scatter/gather over the tensor-parallel group),
// then the gradient reductions and the optimizer step. Every instruction's start
// and end go to the timeline.
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/comm/process_groups.h"
#include "core/config/config.h"
#include "core/data/token_source.h"
#include "core/model/rank_model.h"
#include "core/optim/adamw.h"
#include "core/optim/distributed_optimizer.h"
#include "core/optim/grad_reduce.h"
#include "core/optim/loss_scaler.h"
#include "core/optim/sharded_parts.h"
#include "core/results/timeline.h"
#include "core/runtime/grad_overlap.h"
#include "core/schedule/deadlock.h"
#include "core/schedule/instruction.h"

namespace ptdp {

struct IterationResult {
  double loss_sum = 0;         // Σ per-token losses this rank computed (last stage), else 0
  std::int64_t loss_tokens = 0;
  double grad_norm = 0;        // global, before clipping (unscaled)
  bool skipped = false;        // fp16 overflow: the optimizer step was skipped
  double loss_scale = 1;       // the loss scale this iteration ran with
  Timeline timeline;           // this rank's instructions, seconds from the iteration start
};

class Executor {
 public:
  // `sharded`: the distributed optimizer (then `optimizer` is its AdamW), or null;
  // `parts`: ZeRO-2/3's residency, attached to `model` (then `sharded` is built on its layout), or null.
  Executor(const Config& cfg, Ops& ops, RankModel& model, AdamW& optimizer, ProcessGroups& groups,
           const TokenSource& data, DistributedOptimizer* sharded = nullptr, ShardedParts* parts = nullptr);

  // Distributed optimizer: waits for the last step's parameter all-gather and
  // puts the weights in place (run() does it before its first forward).
  void finish_param_gather();
  // The fp16 loss scale's state (a checkpoint saves and restores it).
  LossScaler& loss_scaler() { return scaler_; }
  // Testing aid (--fault slow): every forward and backward takes `factor`
  // (>= 1) times its own time, the rest spent sleeping inside it.
  void set_compute_slowdown(double factor) { compute_slowdown_ = factor; }

  // Runs `program` for the iteration whose first global sample is
  // `first_sample`, its optimizer step at learning rate `lr`.
  IterationResult run(const Program& program, std::int64_t first_sample, double lr);

 private:
  // What one (micro-batch, chunk) holds between instructions.
  struct Slot {
    ChunkActs acts;
    Tensor input, output, dout, dinput;  // (b, s, h) each
  };
  struct PendingSend {
    std::unique_ptr<Request> request;
    Tensor buffer;  // kept alive until the send completed
  };
  struct PostedReceive {
    Instr in;
    Tensor x;      // (b, s, h): the received tensor
    Tensor piece;  // (b·s·h/t): the received 1/t with scatter/gather, else undefined
    std::unique_ptr<Request> request;
  };

  void execute(const Instr& in, IterationResult& result);
  void forward(const Instr& in, IterationResult& result);
  void backward(const Instr& in);         // B(mb, chunk) whole, or (backward_input) its input half
  void backward_weight(const Instr& in);  // W(mb, chunk): the GEMMs its backward_input deferred
  // Runs the transfers program[begin, end) of one schedule step as one group.
  void run_transfer_step(const Program& program, std::size_t begin, std::size_t end);
  void post_send(const Instr& in);
  bool sequence_split() const;   // boundary tensors are (b, s/t, h) token rows
  bool split_boundary() const;   // scatter/gather of boundary tensors applies
  PostedReceive post_receive(const Instr& in);
  void complete_receive(PostedReceive& r);
  void drain_sends(bool wait_all);
  void optimizer_step(IterationResult& result);
  void plan_reduction(const Program& program);
  PartDone part_done(const Instr& in);
  const MicroBatch& micro_batch(int mb);
  Slot& slot(int mb, int chunk) { return slots_[{mb, chunk}]; }
  int tag(bool gradient, int virtual_stage, int mb) const;

  const Config& cfg_;
  Ops& ops_;
  RankModel& model_;
  AdamW& optimizer_;
  DistributedOptimizer* sharded_;
  ShardedParts* parts_;
  ProcessGroups& groups_;
  const TokenSource& data_;
  std::int64_t first_sample_ = 0;
  double lr_ = 0;  // this iteration's learning rate (run's argument)
  std::map<std::pair<int, int>, Slot> slots_;
  // Zero bubble: per (mb, chunk), the weight-gradient GEMMs from its B to its
  // W (outlives the slot, which send_backward frees).
  std::map<std::pair<int, int>, DeferredWeightGrads> deferred_;
  std::map<int, MicroBatch> batches_;
  std::vector<PendingSend> sends_;
  double compute_slowdown_ = 1;  // set_compute_slowdown
  void slow_down(const Instr& in, std::chrono::steady_clock::duration elapsed, const std::vector<CommWait>& waits) const;
  bool group_transfers_ = true;  // the schedule's steps pair up across ranks (core/schedule/deadlock.h)
  LossScaler scaler_;
  Tensor loss_sum_;                             // (1) f64: Σ per-token losses of this iteration, on the device
  LastBackwards last_backwards_;                // when each chunk's gradients become final
  std::vector<BackwardSite> visit_;             // the sites those last backwards complete, in order
  std::unique_ptr<BucketedGradReduce> reduce_;  // the data-parallel all-reduce, bucket by bucket (null with parts_)
};

}  // namespace ptdp
