// Executor: instruction dispatch, point-to-point transfers with optional
// scatter/gather, micro-batch data, and the end-of-iteration steps.
#include "core/runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "core/comm/tensor_collectives.h"
#include "core/optim/grad_clip.h"
#include "core/optim/grad_reduce.h"
#include "core/schedule/registry.h"

namespace ptdp {

Executor::Executor(const Config& cfg, Ops& ops, RankModel& model, AdamW& optimizer, ProcessGroups& groups,
                   const TokenSource& data, DistributedOptimizer* sharded, ShardedParts* parts)
    : cfg_(cfg), ops_(ops), model_(model), optimizer_(optimizer), sharded_(sharded), parts_(parts), groups_(groups),
      data_(data),
      scaler_(cfg.plan.precision == Precision::fp16) {
  const Plan& p = cfg.plan;
  if (p.pp > 1) {
    const std::vector<Program> pipeline = build_pipeline(p.schedule, p.pp, p.micro_batches(), p.virtual_stages);
    group_transfers_ = grouped_steps_deadlock(pipeline).empty();
  }
}

// Host synchronisations of one iteration (none per micro-batch: losses are
// summed on the device, token ids are uploaded asynchronously from pinned
// staging buffers, gradient buckets are all-reduced on their own stream):
//  1. optimizer_step: the gradient norm is read back once (one launch over
//     every gradient) and, with t·p > 1, all-reduced as a host value over the
//     model-parallel group: the loss scaler's skip decision and the clip factor
//     are host decisions that need it.
//  2. the end of run(): the loss sum is read back and the stream drained, so the
//     timing marks can be read and the iteration's time is complete.
// Outside: Trainer::step's barrier before run() (all ranks start the clock
// together) and its host all-reduces of the time and loss after it. Pipeline
// receives wait on the host only on host backends (Request::order_before_use).
IterationResult Executor::run(const Program& program, std::int64_t first_sample, double lr) {
  first_sample_ = first_sample;
  lr_ = lr;
  finish_param_gather();  // before zero_grads: the gather lands in the gradient buffer
  model_.zero_grads();
  if (parts_) parts_->begin_iteration();
  else plan_reduction(program);
  if (!loss_sum_.defined()) loss_sum_ = ops_.empty({1}, DType::f64);
  ops_.zero(loss_sum_);
  IterationResult result;
  result.loss_scale = scaler_.scale();
  // Marks count from mark 0, taken now, like the recorded collective waits.
  const auto t0 = std::chrono::steady_clock::now();
  // Collective waits are timed on the host, which is exact only when ops are synchronous.
  if (ops_.synchronous()) groups_.recorder->start(t0);
  ops_.reset_marks(2 * static_cast<int>(program.size()) + 1);
  ops_.record_mark(0);
  std::vector<TimelineEvent> waits;
  for (std::size_t i = 0; i < program.size();) {
    std::size_t end = transfer_step_end(program, i);
    std::vector<CommWait> step_waits;
    if (end > i) {
      run_transfer_step(program, i, end);
      step_waits = groups_.recorder->drain();
    } else {
      ops_.record_mark(static_cast<int>(2 * i + 1));
      const auto begin = std::chrono::steady_clock::now();
      execute(program[i], result);
      step_waits = groups_.recorder->drain();
      slow_down(program[i], std::chrono::steady_clock::now() - begin, step_waits);
      ops_.record_mark(static_cast<int>(2 * i + 2));
      end = i + 1;
    }
    for (const CommWait& w : step_waits)
      waits.push_back({groups_.world_rank, program[end - 1], w.start_s, w.end_s, w.group, w.op});
    drain_sends(false);
    i = end;
  }
  groups_.recorder->stop();
  drain_sends(true);
  if (result.loss_tokens > 0) result.loss_sum = ops_.read_f64(loss_sum_);
  ops_.synchronize();
  for (std::size_t i = 0; i < program.size(); ++i)
    result.timeline.push_back({groups_.world_rank, program[i], ops_.mark_seconds(static_cast<int>(2 * i + 1)),
                               ops_.mark_seconds(static_cast<int>(2 * i + 2))});
  result.timeline.insert(result.timeline.end(), waits.begin(), waits.end());
  slots_.clear();
  deferred_.clear();
  batches_.clear();
  return result;
}

// --fault slow: a forward or backward that took `elapsed`, `waits` of it in
// collectives, sleeps (factor − 1) times its own busy time (the waits are
// others' time, not this rank's compute).
void Executor::slow_down(const Instr& in, std::chrono::steady_clock::duration elapsed,
                         const std::vector<CommWait>& waits) const {
  if (compute_slowdown_ <= 1 || !is_compute(in.op)) return;
  double busy_s = std::chrono::duration<double>(elapsed).count();
  for (const CommWait& w : waits) busy_s -= w.end_s - w.start_s;
  if (busy_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>((compute_slowdown_ - 1) * busy_s));
}

// One entry per Op, indexed by Op: adding an Op that the list of a rank can
// hold means one entry here (op_table rejects a table with one missing).
void Executor::execute(const Instr& in, IterationResult& result) {
  using Run = void (*)(Executor&, const Instr&, IterationResult&);
  constexpr Run transfer = [](Executor&, const Instr& i, IterationResult&) {
    throw std::logic_error(to_string(i) + " outside a transfer step");  // transfers run as steps in run()
  };
  static constexpr OpTable<Run> kRun = op_table<Run>(
      transfer,                                                                          // recv_forward
      [](Executor& e, const Instr& i, IterationResult& r) { e.forward(i, r); },        // forward
      transfer,                                                                          // send_forward
      transfer,                                                                          // recv_backward
      [](Executor& e, const Instr& i, IterationResult&) { e.backward(i); },            // backward
      transfer,                                                                          // send_backward
      [](Executor& e, const Instr& i, IterationResult&) { e.backward(i); },            // backward_input
      [](Executor& e, const Instr& i, IterationResult&) { e.backward_weight(i); },     // backward_weight
      [](Executor& e, const Instr&, IterationResult&) {                                 // reduce_tied
        if (e.parts_) e.parts_->reduce_tied(e.model_.tied_word(), *e.groups_.embedding);
        else reduce_tied_embedding(e.model_.tied_word(), *e.groups_.embedding);
      },
      [](Executor& e, const Instr&, IterationResult&) {                                 // reduce_grads
        // The buckets not launched in backward, or ZeRO-2/3's reduce-scatters still in flight.
        if (e.parts_) e.parts_->finish_gradients();
        else e.reduce_->finish();
      },
      [](Executor& e, const Instr&, IterationResult& r) { e.optimizer_step(r); });     // optimizer_step
  kRun[op_index(in.op)](*this, in, result);
}

void Executor::forward(const Instr& in, IterationResult& result) {
  Slot& s = slot(in.mb, in.chunk);
  ModelChunk& chunk = model_.chunk(in.chunk);
  const bool needs_data = chunk.layout().has_embedding || chunk.layout().has_head;
  static const MicroBatch kNone{};
  Tensor out = chunk.forward(needs_data ? micro_batch(in.mb) : kNone, s.input, s.acts);
  if (!chunk.layout().has_head) {
    s.output = out;
    return;
  }
  ops_.accumulate_sum(out, loss_sum_);  // read back once, at the end of run()
  result.loss_tokens += out.numel();
}

// The bucket plan of this program (cheap: a few hundred parameters); the
// previous iteration's reduction finished at its reduce_grads.
// With the distributed optimizer the buckets are multiples of d and reduce-scatter
// into its owned buffer (the same buckets it was built with: same program).
void Executor::plan_reduction(const Program& program) {
  ReductionPlan plan = ptdp::plan_reduction(model_, program, sharded_ ? groups_.dp->size() : 1);
  last_backwards_ = std::move(plan.last);
  visit_ = std::move(plan.visit);
  reduce_ = std::make_unique<BucketedGradReduce>(model_.grad_buffer(), *groups_.dp, std::move(plan.buckets),
                                                 sharded_ ? sharded_->owned_grads() : Tensor{});
  reduce_->begin_iteration();
}

void Executor::finish_param_gather() {
  if (sharded_) sharded_->finish_param_gather();
}

// On the last backward of a chunk, each completed part may make buckets ready
// (without overlap_grad_reduce all wait for reduce_grads).
PartDone Executor::part_done(const Instr& in) {
  if (parts_ || !cfg_.plan.overlap_grad_reduce || in.mb != last_backwards_.mb[static_cast<std::size_t>(in.chunk)])
    return {};  // ZeRO-2/3 reduce-scatter every micro-batch's gradients (ShardedParts)
  return [this, chunk = in.chunk](int part) {
    const auto it = std::find(visit_.begin(), visit_.end(), BackwardSite{chunk, part});
    reduce_->visited(static_cast<int>(it - visit_.begin()));
  };
}

void Executor::backward(const Instr& in) {
  Slot& s = slot(in.mb, in.chunk);
  ModelChunk& chunk = model_.chunk(in.chunk);
  const bool needs_data = chunk.layout().has_embedding || chunk.layout().has_head;
  static const MicroBatch kNone{};
  const Plan& p = cfg_.plan;
  // Loss = mean over the B·s tokens of the iteration: each micro-batch's token
  // sum enters with 1/(b·s·m·d) (times the fp16 loss scale); the data-parallel
  // all-reduce then sums.
  const double grad_scale =
      scaler_.scale() / (static_cast<double>(p.micro_batch) * cfg_.model.seq_len * p.micro_batches() * p.dp);
  // A zero-bubble B leaves the weight gradients to its W, so the gradient
  // buckets' readiness fires there, not here.
  const bool split = in.op == Op::backward_input;
  DeferredWeightGrads* later = split ? &deferred_[{in.mb, in.chunk}] : nullptr;
  s.dinput = chunk.backward(needs_data ? micro_batch(in.mb) : kNone, s.dout, s.acts, grad_scale,
                            split ? PartDone{} : part_done(in), later);
  s.acts = ChunkActs{};
  s.input = s.dout = Tensor{};
  if (!s.dinput.defined()) slots_.erase({in.mb, in.chunk});
}

// Runs the deferred GEMMs, then, on the chunk's last W, reports every part
// complete in backward_parts() order (the head's and embedding's gradients
// were complete at B already; reporting them here keeps the visit order).
void Executor::backward_weight(const Instr& in) {
  const auto it = deferred_.find({in.mb, in.chunk});
  if (it == deferred_.end()) throw std::logic_error(to_string(in) + " before its backward_input");
  ModelChunk& chunk = model_.chunk(in.chunk);
  it->second.run(ops_, chunk.residency(), chunk.index());
  deferred_.erase(it);
  const PartDone done = part_done(in);
  if (!done) return;
  for (const ChunkPart& part : chunk.backward_parts()) done(part.part);
}

int Executor::tag(bool gradient, int virtual_stage, int mb) const {
  return 2 * (virtual_stage * cfg_.plan.micro_batches() + mb) + (gradient ? 1 : 0);
}

// The sends and receives of one schedule step (e.g. 1F1B's send_forward then
// recv_backward) go out as one group, as Megatron's batch_isend_irecv: all are
// posted, the group ends, then the receives complete. On NCCL completing a
// receive only orders the compute stream after it, so the host never stalls on
// a transfer; on MPI it waits before the data is used. Where the schedule's
// steps do not pair up across ranks (interleaved's steady state), grouped steps could
// wait in a cycle: the transfers then go out one by one, each on its own
// direction's NCCL channel, which cannot. Each instruction's marks bracket its
// posting; the last one's end mark follows the completion.
void Executor::run_transfer_step(const Program& program, std::size_t begin, std::size_t end) {
  std::vector<PostedReceive> receives;
  Communicator& pp = *groups_.pp;
  if (group_transfers_) pp.group_start();
  for (std::size_t k = begin; k < end; ++k) {
    ops_.record_mark(static_cast<int>(2 * k + 1));
    const Instr& in = program[k];
    if (is_recv(in.op)) receives.push_back(post_receive(in));
    else post_send(in);
    if (k + 1 < end) ops_.record_mark(static_cast<int>(2 * k + 2));
  }
  if (group_transfers_) pp.group_end();
  for (PostedReceive& r : receives) complete_receive(r);
  ops_.record_mark(static_cast<int>(2 * end));
}

bool Executor::sequence_split() const { return cfg_.plan.sequence_parallel && groups_.tp->size() > 1; }

// Scatter/gather of boundary activations; nothing to add when they are split already.
bool Executor::split_boundary() const {
  return cfg_.plan.scatter_gather && groups_.tp->size() > 1 && !sequence_split();
}

// recv_forward(mb, c) takes virtual stage vs's input, recv_backward its output's gradient.
Executor::PostedReceive Executor::post_receive(const Instr& in) {
  const int vs = in.chunk * cfg_.plan.pp + groups_.coord.pp;  // this chunk's virtual stage
  const int message_tag = tag(!traits(in.op).forward, vs, in.mb);
  const Model& m = cfg_.model;
  Communicator& tp = *groups_.tp;
  // Under sequence parallelism a stage boundary carries this rank's (b, s/t, h) token rows.
  const std::int64_t rows = sequence_split() ? m.seq_len / tp.size() : m.seq_len;
  PostedReceive r{in, ops_.empty({cfg_.plan.micro_batch, rows, m.hidden}), Tensor{}, nullptr};
  const Tensor* target = &r.x;
  if (split_boundary()) {  // receive 1/t; all-gathered once the group ended
    r.piece = ops_.empty({r.x.numel() / tp.size()});
    target = &r.piece;
  }
  r.request = groups_.pp->irecv(target->raw(), target->numel(), target->dtype(), in.peer, message_tag);
  return r;
}

void Executor::complete_receive(PostedReceive& r) {
  r.request->order_before_use();
  if (r.piece.defined()) all_gather(*groups_.tp, r.piece, r.x);
  Slot& s = slot(r.in.mb, r.in.chunk);
  (traits(r.in.op).forward ? s.input : s.dout) = r.x;
}

// send_forward goes to virtual stage vs + 1, send_backward to vs − 1; the
// slot's tensor is released here (the pending send keeps its buffer alive).
void Executor::post_send(const Instr& in) {
  const int vs = in.chunk * cfg_.plan.pp + groups_.coord.pp;
  const bool gradient = !traits(in.op).forward;
  Slot& s = slot(in.mb, in.chunk);
  const Tensor x = gradient ? s.dinput : s.output;
  if (!x.defined()) throw std::logic_error("send of " + to_string(in) + " before its tensor exists");
  Communicator& tp = *groups_.tp;
  Tensor payload = x;
  if (split_boundary()) {  // send this tensor rank's 1/t only
    const std::int64_t piece = x.numel() / tp.size();
    payload = x.view({x.numel()}).rows(tp.rank() * piece, piece);
  }
  const int message_tag = tag(gradient, gradient ? vs - 1 : vs + 1, in.mb);
  sends_.push_back({groups_.pp->isend(payload.raw(), payload.numel(), payload.dtype(), in.peer, message_tag), payload});
  if (gradient) slots_.erase({in.mb, in.chunk});
  else s.output = Tensor{};
}

void Executor::drain_sends(bool wait_all) {
  std::vector<PendingSend> open;
  for (auto& s : sends_) {
    if (wait_all) s.request->wait();
    else if (!s.request->test()) open.push_back(std::move(s));
  }
  sends_ = std::move(open);
}

// Unscale, check for overflow (fp16), clip and step; one pass over the flat
// gradients (the owned (N/d) of them with the distributed optimizer, whose
// step launches the parameter all-gather: waited for here without
// overlap_param_gather, else before the next forward).
void Executor::optimizer_step(IterationResult& result) {
  const double scale = scaler_.scale();
  const double scaled_norm = sharded_ ? sharded_->grad_norm(*groups_.model_parallel)
                                      : global_grad_norm(ops_, model_.params(), *groups_.model_parallel);
  result.grad_norm = scaled_norm / scale;
  if (!scaler_.update(scaled_norm)) {
    result.skipped = true;
    return;
  }
  const double factor = clip_factor(result.grad_norm, cfg_.optimizer.clip_grad) / scale;
  Tensor grads = sharded_ ? sharded_->owned_grads() : model_.grad_buffer();
  if (factor != 1.0) ops_.scale(grads, factor);
  if (!sharded_) {
    optimizer_.step(lr_);
    return;
  }
  sharded_->step(lr_);
  if (parts_ && !cfg_.plan.shards_parameters()) parts_->install_weights(sharded_->owned_grads());  // ZeRO-2
  if (!cfg_.plan.overlap_param_gather) sharded_->finish_param_gather();
}

const MicroBatch& Executor::micro_batch(int mb) {
  auto it = batches_.find(mb);
  if (it != batches_.end()) return it->second;
  const Plan& p = cfg_.plan;
  const int b = p.micro_batch, s = cfg_.model.seq_len;
  const std::int64_t first =
      first_sample_ + static_cast<std::int64_t>(groups_.coord.dp) * (p.global_batch / p.dp) + static_cast<std::int64_t>(mb) * b;
  std::vector<std::int32_t> sample(static_cast<std::size_t>(s) + 1), tokens, targets;
  for (int i = 0; i < b; ++i) {
    data_.sample(first + i, s, sample.data());
    tokens.insert(tokens.end(), sample.begin(), sample.end() - 1);
    targets.insert(targets.end(), sample.begin() + 1, sample.end());
  }
  MicroBatch batch{ops_.empty({b, s}, DType::i32), ops_.empty({b, s}, DType::i32)};
  ops_.upload_i32(tokens.data(), batch.tokens);
  ops_.upload_i32(targets.data(), batch.targets);
  return batches_.emplace(mb, std::move(batch)).first->second;
}

}  // namespace ptdp
