// Cost tables of a configuration.
#include "core/sim/cost_model.h"

#include <algorithm>

#include "core/accounting/memory_model.h"
#include "core/config/chunk_layout.h"
#include "core/config/rank_dims.h"
#include "core/sim/sharded_comm.h"

namespace ptdp {

namespace {

Topology topology_of(const Config& cfg) {
  return {cfg.plan.tp, cfg.plan.pp, cfg.plan.dp, std::max(1, cfg.machine.gpus_per_node)};
}

// Ranks of pipeline stage `stage` on the node of its first rank: they send across nodes at once.
int stage_ranks_on_node(const Topology& topo, int stage) {
  int n = 0;
  for (const int r : topo.node_ranks(topo.rank_of({0, 0, stage}))) n += topo.coord(r).pp == stage ? 1 : 0;
  return n;
}

}  // namespace

CostModel::CostModel(const Config& cfg, const Calibration* calibration)
    : p_(cfg.plan.pp), v_(cfg.plan.virtual_stages), dims_(cfg.model, cfg.plan) {
  const Topology topo = topology_of(cfg);
  const int ranks_on_host = static_cast<int>(topo.node_ranks(0).size());
  const DeviceRates dev(cfg.machine, cfg.plan.precision, calibration, ranks_on_host);
  const CommModel comm(cfg.machine, calibration);
  const Placement tp = group_placement(topo, topo.tp_group(0));
  layer_ = layer_costs(cfg.model, cfg.plan, dims_, dev, comm, tp);
  edges_ = edge_costs(cfg.model, cfg.plan, dims_, dev, comm, tp);
  build_chunk_costs(cfg, dev, comm, group_placement(topo, topo.dp_group(0)));
  build_step_costs(cfg, comm, topo);
  for (int r = 0; r < p_; ++r) {
    to_next_.push_back(boundary_transfer(cfg, comm, topo, r, (r + 1) % p_));
    to_prev_.push_back(boundary_transfer(cfg, comm, topo, r, (r + p_ - 1) % p_));
  }
  // Optimizer: memory-bound passes of a mixed-precision step, bytes per parameter:
  // unscale and check the fp32 gradients (8), global norm (4), clip (8), Adam
  // (gradient 4, master, m and v read and written 24), masters to 16-bit weights
  // (6), zero the gradients (4): 58.
  for (int r = 0; r < p_; ++r)
    optimizer_.push_back(
        dev.memory_seconds(58.0 * static_cast<double>(rank_parameter_count(cfg.model, cfg.plan, dims_, r)), 7));
  switch_off(cfg.machine.mechanisms);
}

// Ablation (ptdp validate --ablate): what a mechanism switched off costs nothing.
void CostModel::switch_off(const Mechanisms& on) {
  const auto zero = [](std::vector<double>& v) { std::fill(v.begin(), v.end(), 0.0); };
  if (!on.optimizer_step) zero(optimizer_);
  if (!on.data_parallel_comm) zero(dp_reduce_), zero(param_gather_), dp_overlap_.clear(), tied_reduce_ = 0;
  if (!on.pipeline_comm) zero(to_next_), zero(to_prev_);
  if (!on.tensor_parallel_comm)
    for (auto* v : {&forward_, &backward_, &backward_input_, &weight_grad_})
      for (PassCost& c : *v) c.tp_comm = 0;
  if (!on.data_parallel_comm)
    for (auto* v : {&forward_, &backward_, &backward_input_, &weight_grad_})
      for (PassCost& c : *v) c.dp_comm = 0;
}

void CostModel::build_chunk_costs(const Config& cfg, const DeviceRates& dev, const CommModel& comm, Placement dp) {
  for (int r = 0; r < p_; ++r)
    for (int c = 0; c < v_; ++c) {
      const ChunkLayout l = chunk_layout(cfg.model, cfg.plan, r, c);
      PassCost f = l.num_layers * layer_.forward, b = l.num_layers * layer_.backward;
      PassCost w = l.num_layers * layer_.weight_grad;
      b += l.num_layers * layer_.recompute;
      if (!cfg.plan.grad_accumulation_fusion && cfg.machine.mechanisms.fp32_grad_accumulation) {
        // Each micro-batch's 16-bit weight gradients are added into the fp32
        // main gradients in a pass of their own: read 2, read 4 and write 4 bytes.
        const double params = static_cast<double>(chunk_parameter_count(cfg.model, dims_, l));
        b.memory += dev.memory_seconds(10 * params, 1);
        w.memory += dev.memory_seconds(10 * params, 1);
      }
      if (l.has_embedding) f += edges_.embedding_forward, b += edges_.embedding_backward;
      if (l.has_head) f += edges_.head_forward, b += edges_.head_backward;
      PassCost bi = b;
      bi -= w;
      // ZeRO-2/3 (sharded_comm.h): a backward gathers and reduce-scatters; a
      // zero-bubble B gathers (it needs the weights) and W reduce-scatters.
      const ShardedTraffic dp_traffic = sharded_traffic(cfg, dims_, l, comm, dp);
      f.dp_comm = exposed_s(dp_traffic.gather_s, f.total());
      bi.dp_comm = exposed_s(dp_traffic.gather_s, bi.total());
      w.dp_comm = exposed_s(dp_traffic.reduce_scatter_s, w.total());
      b.dp_comm = exposed_s(dp_traffic.gather_s + dp_traffic.reduce_scatter_s, b.total());
      forward_.push_back(f);
      backward_.push_back(b);
      weight_grad_.push_back(w);
      backward_input_.push_back(bi);
    }
}

void CostModel::build_step_costs(const Config& cfg, const CommModel& comm, const Topology& topo) {
  const Plan& p = cfg.plan;
  const double grad_bytes = grad_element_bytes(p);  // fp32 main gradients unless grad_precision is compute
  const Placement dp = group_placement(topo, topo.dp_group(0));
  for (int r = 0; r < p_; ++r) {
    const double params = static_cast<double>(rank_parameter_count(cfg.model, p, dims_, r));
    // The distributed optimizer reduce-scatters gradients and, after its step,
    // all-gathers the updated fp32 weights (DistributedOptimizer::step). That
    // gather is waited for at the step's end, or with overlap_param_gather at
    // the next iteration's start, before its first forward: nothing of the
    // iteration runs beside it either way, so it is charged whole, here.
    // ZeRO-2 has reduce-scattered its gradients in the backwards already
    // (sharded_comm.h): the step waits only for the last unit's, which no pass
    // hides (the largest unit's, at most), and gathers as ZeRO-1; ZeRO-3 keeps
    // its weights sharded and gathers them in the passes.
    const double weight_bytes = 4;  // the updated fp32 weights, whatever the gradients' type
    const double gather = p.shards_optimizer() && !p.shards_parameters() ? comm.all_gather(params * weight_bytes, dp) : 0.0;
    const double unit = static_cast<double>(shard_unit_parameter_count(cfg.model, p, dims_, r));
    const double grads = p.shards_gradients()    ? comm.reduce_scatter(unit * element_bytes(p.precision), dp)
                         : p.shards_optimizer() ? comm.reduce_scatter(params * grad_bytes, dp)
                                                : comm.all_reduce(params * grad_bytes, dp);
    dp_reduce_.push_back(grads + gather);
    param_gather_.push_back(gather);
    // overlap_grad_reduce: the buckets reduced during the last backwards.
    if (p.overlap_grad_reduce && p.dp > 1 && !p.shards_gradients())
      dp_overlap_.emplace_back(cfg, dims_, layer_, edges_, comm, dp, r);
  }
  // Tied embedding: the word embedding shard summed between the first and last
  // stage (an untied output layer has its own weights: nothing to sum).
  const double word = static_cast<double>(cfg.model.vocab) / p.tp * cfg.model.hidden * grad_bytes;
  const bool tied = p.pp > 1 && cfg.model.tied_embeddings;
  tied_reduce_ = tied ? comm.all_reduce(word, group_placement(topo, topo.embedding_group(0))) : 0.0;
}

double CostModel::boundary_transfer(const Config& cfg, const CommModel& comm, const Topology& topo, int src,
                                     int dst) const {
  const Plan& p = cfg.plan;
  const bool same_node = topo.same_node(topo.rank_of({0, 0, src}), topo.rank_of({0, 0, dst}));
  const double e = element_bytes(p.precision);
  const double bytes = static_cast<double>(p.micro_batch) * cfg.model.seq_len * cfg.model.hidden * e;
  const int senders = stage_ranks_on_node(topo, src);  // this stage's ranks on a node send at once
  if (!p.scatter_gather || p.tp == 1) return comm.p2p(bytes, same_node, senders);
  // Each tensor-parallel rank sends 1/t; the receivers all-gather over NVLink.
  return comm.p2p(bytes / p.tp, same_node, senders) + comm.all_gather(bytes, group_placement(topo, topo.tp_group(0)));
}

double CostModel::transfer(int src, int dst) const {
  if (dst == (src + 1) % p_) return to_next_[static_cast<std::size_t>(src)];
  return to_prev_[static_cast<std::size_t>(src)];
}

const PassCost& CostModel::pass(int pp_rank, const Instr& in) const {
  switch (in.op) {
    case Op::forward: return forward(pp_rank, in.chunk);
    case Op::backward_input: return backward_input(pp_rank, in.chunk);
    case Op::backward_weight: return backward_weight(pp_rank, in.chunk);
    default: return backward(pp_rank, in.chunk);
  }
}

PipelineCosts CostModel::pipeline_costs() const {
  PipelineCosts c;
  // One entry per Op (instruction.h's order); receives cost nothing here: the
  // transfer is priced on the sending side, the wait is the simulator's.
  using Cost = double (*)(const CostModel&, int rank, const Instr&);
  static constexpr OpTable<Cost> kCost = op_table<Cost>(
      [](const CostModel&, int, const Instr&) { return 0.0; },                                // recv_forward
      [](const CostModel& m, int r, const Instr& in) { return m.forward(r, in.chunk).total(); },   // forward
      [](const CostModel& m, int r, const Instr& in) { return m.transfer(r, in.peer); },          // send_forward
      [](const CostModel&, int, const Instr&) { return 0.0; },                                // recv_backward
      [](const CostModel& m, int r, const Instr& in) { return m.backward(r, in.chunk).total(); },  // backward
      [](const CostModel& m, int r, const Instr& in) { return m.transfer(r, in.peer); },          // send_backward
      [](const CostModel& m, int r, const Instr& in) { return m.backward_input(r, in.chunk).total(); },  // B
      [](const CostModel& m, int r, const Instr& in) { return m.backward_weight(r, in.chunk).total(); },  // W
      [](const CostModel& m, int, const Instr&) { return m.tied_reduce(); },                  // reduce_tied
      [](const CostModel& m, int r, const Instr&) { return m.dp_reduce(r); },                 // reduce_grads
      [](const CostModel& m, int r, const Instr&) { return m.optimizer(r); });                // optimizer_step
  c.duration = [this](int rank, const Instr& in) { return kCost[op_index(in.op)](*this, rank, in); };
  c.transfer = [this](int src, int dst, const Instr&) { return transfer(src, dst); };
  if (!dp_overlap_.empty())
    c.reduce_grads_end = [this](int r, double now, const std::vector<GradSpan>& last) {
      return dp_overlap_[static_cast<std::size_t>(r)].end(now, last) + param_gather(r);
    };
  return c;
}

}  // namespace ptdp
