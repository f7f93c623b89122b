// Memory model: parameter shards, state, and activations by walking the schedule.
#include "core/accounting/memory_model.h"

#include <algorithm>

#include "core/accounting/flops.h"
#include "core/config/chunk_layout.h"
#include "core/config/rank_dims.h"

namespace ptdp {

namespace {
std::int64_t i64(int x) { return static_cast<std::int64_t>(x); }
}  // namespace

MemoryTraits memory_traits(const Machine& machine, const Plan& plan) {
  return memory_traits(machine.device, plan.precision, plan.attention == Attention::flash);
}

std::int64_t layer_shard_parameter_count(const Model& m, const RankDims& r) {
  const std::int64_t h = r.h, q = r.a * r.head_dim, kv = 2 * r.g * r.head_dim;
  const std::int64_t mats = m.activation == Activation::swiglu ? 3 : 2;
  // Column-parallel q (q, h) and kv (kv, h), row-parallel out (h, q), the MLP's
  // column-parallel fc1 ((mats-1)·f/t, h) and row-parallel fc2 (h, f/t).
  const std::int64_t weights = h * (q + kv) + q * h + mats * h * r.f;
  // Biases: q, kv and fc1 split; out's and fc2's (h) replicated.
  const std::int64_t biases = m.bias ? q + kv + (mats - 1) * r.f + 2 * h : 0;
  return weights + biases + 2 * norm_parameter_count(m);  // the two norms, replicated
}

std::int64_t chunk_parameter_count(const Model& m, const RankDims& r, const ChunkLayout& l) {
  const std::int64_t h = r.h, s = m.seq_len;
  std::int64_t total = i64(l.num_layers) * layer_shard_parameter_count(m, r);
  // Word embedding shard (V'/t, h); the learned position table (s, h), none under rope.
  if (l.has_embedding) total += r.vt * h + (m.position == Position::learned ? s * h : 0);
  // Final norm; the output layer's shard: untied its own weights, tied a copy of the word
  // embedding's when the embedding is on another stage (both on one chunk only when p·v = 1).
  if (l.has_head) total += norm_parameter_count(m) + (m.tied_embeddings && l.has_embedding ? 0 : r.vt * h);
  return total;
}

std::int64_t rank_parameter_count(const Model& m, const Plan& p, const RankDims& r, int pp_rank) {
  std::int64_t total = 0;
  for (int c = 0; c < p.virtual_stages; ++c) total += chunk_parameter_count(m, r, chunk_layout(m, p, pp_rank, c));
  return total;
}

std::int64_t peak_alive_bytes(const Program& program, const std::vector<std::int64_t>& chunk_bytes,
                              const std::vector<DeferredBytes>& deferred, std::int64_t backward_transient) {
  std::int64_t alive = 0, peak = 0;
  for (const Instr& in : program) {
    const auto c = static_cast<std::size_t>(in.chunk);
    const DeferredBytes w = c < deferred.size() ? deferred[c] : DeferredBytes{};
    if (in.op == Op::forward) alive += chunk_bytes[c];
    // A backward (or B) also holds its transient (one recomputed layer), and a
    // B what it has made for W by its last layer (DeferredBytes).
    std::int64_t extra = ends_activation(in.op) ? backward_transient : 0;
    if (in.op == Op::backward_input) extra += w.in_b;
    peak = std::max(peak, alive + extra);
    if (ends_activation(in.op)) alive -= chunk_bytes[c];
    if (in.op == Op::backward_input) alive += w.held;
    if (in.op == Op::backward_weight) alive -= w.held;
  }
  return peak;
}

std::int64_t shard_unit_parameter_count(const Model& m, const Plan& p, const RankDims& r, int pp_rank) {
  std::int64_t unit = 0;
  for (int c = 0; c < p.virtual_stages; ++c) {
    const ChunkLayout l = chunk_layout(m, p, pp_rank, c);
    if (l.num_layers > 0) unit = std::max(unit, layer_shard_parameter_count(m, r));
    // The embedding and the head, each a unit of its own (chunk_parameter_count's pieces).
    if (l.has_embedding) unit = std::max(unit, chunk_parameter_count(m, r, ChunkLayout{0, 0, 0, true, false}));
    if (l.has_head) unit = std::max(unit, chunk_parameter_count(m, r, ChunkLayout{0, 0, 0, false, true}));
  }
  return unit;
}

StateBytes state_bytes(const Plan& p, const MemoryTraits& tr, std::int64_t params, std::int64_t unit) {
  StateBytes s;
  const std::int64_t d = p.dp, owned = (params + d - 1) / d;
  // ZeRO-3: the owned shard, the unit in use and the one prefetched (never above the whole).
  s.params = (p.shards_parameters() ? std::min(params, owned + 2 * unit) : params) * tr.weight_bytes;
  const std::int64_t g = grad_element_bytes(p);  // 4, or 2 where grad_precision is compute in 16 bits
  if (p.shards_gradients())  // ZeRO-2/3: the owned shard and one unit's gradient (compute type) on its way out
    s.grads = std::min(params * g, owned * g + unit * tr.weight_bytes);
  else  // the distributed optimizer's owned (N/d) buffer sits beside the full one in ptdp's runtime
    s.grads = params * g + (p.shards_optimizer() ? params * g / d : 0);
  const std::int64_t state = params * (8 + (tr.master_weights ? 4 : 0));
  s.optimizer = p.shards_optimizer() ? state / d : state;
  return s;
}

// Weights in the compute type, fp32 gradients (accumulated and all-reduced in
// fp32 under fp16 too, as Megatron-LM's --accumulate-allreduce-grads-in-fp32
// and ptdp's runtime do; 16-bit with grad_precision compute), fp32 Adam moments and masters (sharded over d from
// dp_sharding optimizer on): 18 bytes a parameter in 16-bit, 16 in fp32;
// gradients and weights sharded too as state_bytes() says.
MemoryBreakdown memory_model(const Model& m, const Plan& p, const RankDims& r, const MemoryTraits& tr,
                             ActivationFormula formula, int pp_rank, const Program& program) {
  MemoryBreakdown mb;
  const std::int64_t unit = p.shards_gradients() ? shard_unit_parameter_count(m, p, r, pp_rank) : 0;
  const StateBytes s = state_bytes(p, tr, rank_parameter_count(m, p, r, pp_rank), unit);
  mb.params = s.params, mb.grads = s.grads, mb.optimizer = s.optimizer;
  const ActivationBytes a = activation_bytes(m, p, r, tr, formula);
  std::vector<std::int64_t> chunk_bytes;  // bytes one micro-batch keeps on each chunk
  std::vector<DeferredBytes> deferred;     // and what its zero-bubble W holds
  // A B layer's new output gradients, less fc2's: the layer's incoming
  // gradient (b, s, h), alive already. Under full recompute the layer being
  // recomputed is the backward transient.
  const std::int64_t incoming = r.nr * r.h * tr.weight_bytes;  // (b, s/t, h) under SP
  for (int c = 0; c < p.virtual_stages; ++c) {
    const ChunkLayout l = chunk_layout(m, p, pp_rank, c);
    chunk_bytes.push_back(i64(l.num_layers) * a.layer + (l.has_embedding ? a.embedding : 0) +
                          (l.has_head ? a.head : 0));
    // Each layer B finishes frees its activations (the checkpoint under full
    // recompute, all but W's inputs otherwise) and leaves W its inputs and
    // output gradients: a net dy + x − layer bytes, so B's peak is at its first
    // layer or, when that is positive, at its last.
    const std::int64_t net = a.weight_grad_dy + a.weight_grad_x - a.layer;
    deferred.push_back({a.weight_grad_dy - incoming + std::max<std::int64_t>(0, i64(l.num_layers - 1) * net),
                        i64(l.num_layers) * (a.weight_grad_dy + a.weight_grad_x)});
  }
  // One layer recomputed at a time in backward.
  mb.activations = peak_alive_bytes(program, chunk_bytes, deferred, a.recompute);
  return mb;
}

std::vector<MemoryBreakdown> memory_per_stage(const Model& m, const Plan& p, const RankDims& r, const MemoryTraits& tr,
                                              ActivationFormula formula, const std::vector<Program>& programs) {
  std::vector<MemoryBreakdown> out;
  for (int stage = 0; stage < p.pp; ++stage)
    out.push_back(memory_model(m, p, r, tr, formula, stage, programs[static_cast<std::size_t>(stage)]));
  return out;
}

long double memory_model_bound(const Model& m, const Plan& p) {
  using R = long double;
  const R h = m.hidden, a = m.heads, s = m.seq_len, l = m.layers;
  const R f = m.ffn_hidden > 0 ? R(m.ffn_hidden) : 4 * h;
  const R vocab = R(m.vocab) + std::max(m.vocab_pad_to, 1);  // above the padded vocabulary
  // MLP matrices (2 GeLU, 3 SwiGLU); kv (2·g·d) is at most 2h; an untied output layer doubles V·h.
  const R mats = m.activation == Activation::swiglu ? 3 : 2;
  const R params = (l + 2) * (4 * h * h + mats * h * f + (mats - 1) * f + 10 * h) +
                   (m.tied_embeddings ? 1 : 2) * vocab * h + s * h;
  const R n = R(p.micro_batch) * s;
  const R chunk = (l + 2) * n * 8 * (5 * h + (mats - 1) * f + vocab + 2 * a * s + 8);
  const R alive = R(p.global_batch) / std::max(R(1), R(p.micro_batch) * R(p.dp)) * p.virtual_stages + 1;
  return 20 * params + alive * chunk;
}

bool fits(const Machine& machine, std::int64_t total) {
  return machine.memory_bytes <= 0 || total + machine.memory_reserved_bytes <= machine.memory_bytes;
}

}  // namespace ptdp
