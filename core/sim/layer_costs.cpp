// A layer's costs from its op records (core/layer_ops/layer_ops.h), pass by pass;
// the embedding's and the output layer's from their sizes (see layer_costs.h).
#include "core/sim/layer_costs.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/layer_ops/layer_ops.h"

namespace ptdp {

PassCost& PassCost::operator+=(const PassCost& o) {
  gemm += o.gemm;
  attention += o.attention;
  memory += o.memory;
  tp_comm += o.tp_comm;
  dp_comm += o.dp_comm;
  return *this;
}

PassCost& PassCost::operator-=(const PassCost& o) {
  gemm -= o.gemm;
  attention -= o.attention;
  memory -= o.memory;
  tp_comm -= o.tp_comm;
  dp_comm -= o.dp_comm;
  return *this;
}

PassCost operator*(double k, const PassCost& c) {
  return {k * c.gemm, k * c.attention, k * c.memory, k * c.tp_comm, k * c.dp_comm};
}

namespace {

double real_size(std::int64_t v) { return static_cast<double>(v); }

// GEMM records the layer runs as one step: one GEMM, or q's and kv's on one
// input (forward) or into one summed gradient (backward), with the
// tensor-parallel collective beside them.
struct GemmStep {
  std::vector<const LayerOp*> ops;
  OpCollective collective;
};

bool runs_gemm(const LayerOp& op) { return op.has_gemm() && kind_traits(op.kind).basis != CostBasis::attention; }

// The GEMM steps of `ops` in their order, those `pick` takes.
template <class Pick>
std::vector<GemmStep> gemm_steps(const std::vector<LayerOp>& ops, Pick pick) {
  std::vector<GemmStep> steps;
  for (const LayerOp& op : ops) {
    if (!runs_gemm(op) || !pick(op)) continue;
    if (!op.with_previous || steps.empty()) steps.push_back({});
    steps.back().ops.push_back(&op);
    if (op.collective.any() && op.collective.kind != Collective::all_reduce)
      steps.back().collective = op.collective;  // an all-gather or reduce-scatter: a ring under tp_comm_overlap
  }
  return steps;
}

// Two GEMMs on one input or into one sum as one GEMM: the size they differ in summed.
GemmShape joined(GemmShape a, const GemmShape& b) {
  if (a.m == b.m && a.k == b.k) a.n += b.n;
  else if (a.m == b.m && a.n == b.n) a.k += b.k;
  else a.m += b.m;
  return a;
}

class LayerPricer {
 public:
  LayerPricer(const Model& m, const Plan& p, const RankDims& r, const DeviceRates& dev, const CommModel& comm,
              Placement tp)
      : m_(m), p_(p), r_(r), dev_(dev), comm_(comm), tp_(tp),
        rings_(p.tp_comm_overlap && p.sequence_parallel && r_.t > 1) {}

  LayerCosts price() const {
    const std::vector<LayerOp> forward = layer_ops(m_, p_, r_, Pass::forward);
    std::vector<LayerOp> backward = layer_ops(m_, p_, r_, Pass::backward), recompute;
    for (const LayerOp& op : backward)
      if (op.pass == Pass::recompute) recompute.push_back(op);
    std::erase_if(backward, [](const LayerOp& op) { return op.pass == Pass::recompute; });
    LayerCosts c;
    c.forward = forward_cost(forward);
    c.recompute = forward_cost(recompute);
    c.weight_grad.gemm = weight_grad_seconds(backward);
    c.backward = backward_cost(backward, c.weight_grad.gemm);
    return c;
  }

 private:
  // A step's GEMM time over all its rows, or over one of t row blocks (a ring).
  // The GPT block's q and kv are priced as one fused QKV GEMM, as this cost model
  // priced them before the layer was data: the runtime runs two (docs/projection.md).
  double step_gemm(const GemmStep& step, double row_blocks) const {
    std::vector<GemmShape> shapes;
    for (const LayerOp* op : step.ops) shapes.push_back(op->gemm);
    if (shapes.size() == 2 && m_.kv() == m_.heads) shapes = {joined(shapes[0], shapes[1])};
    double t = 0;
    for (GemmShape g : shapes) {
      g.m /= row_blocks;
      t += dev_.gemm_seconds(g);
    }
    return t;
  }
  double collective_seconds(const OpCollective& c) const {
    const Placement g{c.ranks, std::min(c.ranks, tp_.per_node)};
    switch (c.kind) {
      case Collective::all_gather: return comm_.all_gather(c.bytes, g);
      case Collective::reduce_scatter: return comm_.reduce_scatter(c.bytes, g);
      default: return comm_.all_reduce(c.bytes, g);
    }
  }
  bool is_ring(const GemmStep& s) const { return rings_ && s.collective.any(); }
  // One ring of tp_comm_overlap (core/model/tp_overlap.h): the step's GEMMs on t
  // blocks of n/t rows, and of each of the t−1 transfer steps (the collective's
  // time over its t−1 steps) the part longer than one block's GEMM. A
  // reduce-scatter ring also adds each arriving (n/t, h) partial sum: read two, write one.
  PassCost ring(const GemmStep& s) const {
    const double t = r_.t, block = step_gemm(s, t);
    PassCost c;
    c.gemm = t * block;
    c.tp_comm = (t - 1) * std::max(0.0, collective_seconds(s.collective) / (t - 1) - block);
    if (s.collective.kind == Collective::reduce_scatter)
      c.memory = (t - 1) * dev_.memory_seconds(3 * real_size(r_.n) / t * real_size(r_.h) * r_.e, 1);
    return c;
  }
  // Adds the rings of a pass to c: all-gathers first, then reduce-scatters, each in the pass's order.
  void add_rings(const std::vector<GemmStep>& steps, PassCost& c) const {
    for (const Collective kind : {Collective::all_gather, Collective::reduce_scatter})
      for (const GemmStep& s : steps)
        if (is_ring(s) && s.collective.kind == kind) c += ring(s);
  }
  // Adds to `seconds` the collectives of a pass not run as rings, each priced
  // once and counted as often as the pass runs it, in the order they first appear.
  void add_collectives(const std::vector<LayerOp>& ops, double& seconds) const {
    std::vector<std::pair<OpCollective, int>> seen;
    for (const LayerOp& op : ops) {
      const OpCollective& c = op.collective;
      if (!c.any() || (rings_ && runs_gemm(op) && c.kind != Collective::all_reduce)) continue;
      const auto same = [&c](const auto& s) { return s.first.kind == c.kind && s.first.bytes == c.bytes && s.first.ranks == c.ranks; };
      const auto it = std::find_if(seen.begin(), seen.end(), same);
      if (it == seen.end()) seen.push_back({c, c.count});
      else it->second += c.count;
    }
    for (const auto& [c, count] : seen) seconds += count * collective_seconds(c);
  }
  // Memory-bound work: every record's priced bytes but the attention core's (its own terms).
  double memory_seconds(const std::vector<LayerOp>& ops) const {
    double bytes = 0;
    int kernels = 0;
    for (const LayerOp& op : ops)
      if (kind_traits(op.kind).basis != CostBasis::attention) bytes += op.bytes, kernels += op.kernels;
    return dev_.memory_seconds(bytes, kernels);
  }
  double attention_seconds(const std::vector<LayerOp>& ops) const {
    double t = 0;
    for (const LayerOp& op : ops)
      if (kind_traits(op.kind).basis == CostBasis::attention) t += attention_core(op);
    return t;
  }
  double attention_core(const LayerOp& op) const;

  PassCost forward_cost(const std::vector<LayerOp>& ops) const {
    const std::vector<GemmStep> steps = gemm_steps(ops, [](const LayerOp&) { return true; });
    PassCost c;
    add_rings(steps, c);
    for (const GemmStep& s : steps)
      if (!is_ring(s)) c.gemm += step_gemm(s, 1);
    add_collectives(ops, c.tp_comm);
    c.attention = attention_seconds(ops);
    c.memory += memory_seconds(ops);
    return c;
  }
  // The weight-gradient GEMMs, in the layer's order (the backward's reversed).
  double weight_grad_seconds(const std::vector<LayerOp>& ops) const {
    std::vector<GemmStep> steps = gemm_steps(ops, [](const LayerOp& op) { return op.kind == OpKind::linear_weight_grad; });
    double t = 0;
    for (auto s = steps.rbegin(); s != steps.rend(); ++s) t += step_gemm(*s, 1);
    return t;
  }
  // Backward: the weight gradients, then the data gradients in the layer's
  // order (or as rings), the collectives, the attention core, the element-wise work.
  PassCost backward_cost(const std::vector<LayerOp>& ops, double weight_grads) const {
    std::vector<GemmStep> steps = gemm_steps(ops, [](const LayerOp& op) { return op.kind != OpKind::linear_weight_grad; });
    PassCost c;
    c.gemm = weight_grads;
    add_rings(steps, c);
    for (auto s = steps.rbegin(); s != steps.rend(); ++s)
      if (!is_ring(*s)) c.gemm += step_gemm(*s, 1);
    add_collectives(ops, c.tp_comm);
    c.attention = attention_seconds(ops);
    c.memory += memory_seconds(ops);
    return c;
  }

  const Model& m_;
  const Plan& p_;
  const RankDims& r_;
  const DeviceRates& dev_;
  const CommModel& comm_;
  const Placement tp_;
  const bool rings_;  // tp_comm_overlap: the collectives beside GEMMs run as rings
};

// The attention core of sizes (b, s, a, d, g): fused, one kernel by FLOPs and
// q, k, v, out I/O (causal: about half the blocks of the s×s square; backward
// recomputes the scores, 2.5× the forward's work); unfused, QKᵀ and ·V as
// batched GEMMs (backward four), softmax (fused or three kernels), dropout, and
// without fused ops the [b, s, a, d] transposes of q, k, v and out.
double LayerPricer::attention_core(const LayerOp& op) const {
  const double b = real_size(op.sizes[0]), s = real_size(op.sizes[1]), heads = real_size(op.sizes[2]);
  const double head_dim = real_size(op.sizes[3]), kv_heads = real_size(op.sizes[4]), e = r_.e;
  const double batch = b * heads, scores = b * heads * s * s, io = b * s * head_dim * e * (2 * heads + 2 * kv_heads);
  const bool backward = op.kind == OpKind::attention_backward, fused = p_.fused_ops;
  if (p_.attention == Attention::flash) {
    const double flops = (backward ? 2.5 : 1.0) * 0.5 * 4 * batch * s * s * head_dim;
    return dev_.flash_attention_seconds(flops, (backward ? 2 : 1) * io);
  }
  const GemmShape qk{s, s, head_dim, batch}, pv{s, head_dim, s, batch};
  double t = backward ? dev_.gemm_seconds(pv) + dev_.gemm_seconds(qk) + dev_.gemm_seconds(pv) + dev_.gemm_seconds(pv)
                      : dev_.gemm_seconds(qk) + dev_.gemm_seconds(pv);
  const double passes = backward ? 3 : 2;  // softmax's reads and writes of the scores
  t += fused ? dev_.memory_seconds(passes * scores * e) : dev_.memory_seconds(3 * passes * scores * e, 3);
  if (m_.dropout > 0) t += dev_.memory_seconds(scores * (2 * e + 1));
  if (!fused) t += dev_.memory_seconds(2 * io, 4);
  return t;
}

}  // namespace

LayerCosts layer_costs(const Model& m, const Plan& p, const RankDims& r, const DeviceRates& dev,
                       const CommModel& comm, Placement tp) {
  return LayerPricer(m, p, r, dev, comm, tp).price();
}

EdgeCosts edge_costs(const Model& m, const Plan& p, const RankDims& r, const DeviceRates& dev, const CommModel& comm,
                     Placement tp) {
  const double n = real_size(r.n), h = real_size(r.h), e = r.e;
  const double hr = p.sequence_parallel ? h / r.t : h;  // a replicated tensor's width a token (local rows under SP)
  const double vt = static_cast<double>(m.vocab) / p.tp, mask = m.dropout > 0 ? 1 : 0;
  EdgeCosts c;
  // Lookup of the shard's rows, all-reduce over t, position add (none under rope), dropout.
  c.embedding_forward.memory = m.position == Position::rope ? dev.memory_seconds((2 * e + mask) * n * h, 2)
                                                            : dev.memory_seconds((4 * e + mask) * n * h, 3);
  c.embedding_forward.tp_comm = comm.all_reduce(n * h * e, tp);
  c.embedding_backward.memory = dev.memory_seconds(3 * 4 * n * h, 2);  // fp32 scatter-add of rows
  // Final layernorm, logits (n × V/t), fp32 cross-entropy passes; all-reduce of dlnf in backward.
  c.head_forward.gemm = dev.gemm_seconds({n, vt, h});
  c.head_forward.memory = dev.memory_seconds(2 * n * hr * e + n * vt * (e + 16), 5);
  c.head_forward.tp_comm = 3 * comm.all_reduce(n * 4, tp);
  c.head_backward.gemm = dev.gemm_seconds({n, h, vt}) + dev.gemm_seconds({vt, h, n});
  c.head_backward.memory = dev.memory_seconds(4 * n * hr * e + n * vt * (8 + e), 3);
  c.head_backward.tp_comm = comm.all_reduce(n * h * e, tp);
  return c;
}

}  // namespace ptdp
