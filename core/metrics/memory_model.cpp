// Memory model: parameter shards, state, and activations by walking the schedule.
#include "core/metrics/memory_model.h"

#include <algorithm>

#include "core/model/chunk_layout.h"

namespace ptdp {

namespace {
std::int64_t i64(int x) { return static_cast<std::int64_t>(x); }
}  // namespace

MemoryTraits memory_traits(Device device, Precision precision, bool fused_attention) {
  MemoryTraits tr;
  const bool half = device == Device::cuda && precision != Precision::fp32;
  tr.weight_bytes = half ? 2 : 4;
  tr.master_weights = half;
  tr.scores_materialized = !fused_attention;
  return tr;
}

std::int64_t rank_parameter_count(const Model& m, const Plan& p, int pp_rank) {
  const std::int64_t h = m.hidden, f = m.ffn(), t = p.tp, v = m.padded_vocab(), s = m.seq_len;
  // Shards: QKV (3h/t)·h + 3h/t, proj h·h/t + h, MLP (f/t)·h + f/t + h·f/t + h, two layernorms 4h.
  const std::int64_t per_layer = (3 * h * h + 3 * h + h * h + 2 * h * f + f) / t + 2 * h + 4 * h;
  std::int64_t total = 0;
  bool embedding = false, head = false;
  for (int c = 0; c < p.virtual_stages; ++c) {
    const ChunkLayout l = chunk_layout(m, p, pp_rank, c);
    total += i64(l.num_layers) * per_layer;
    embedding = embedding || l.has_embedding;
    head = head || l.has_head;
  }
  if (embedding) total += v / t * h + s * h;
  if (head) total += 2 * h + (embedding ? 0 : v / t * h);  // final layernorm; tied copy on another stage
  return total;
}

std::int64_t layer_activation_bytes(const Model& m, const Plan& p, const MemoryTraits& tr) {
  const std::int64_t n = i64(p.micro_batch) * m.seq_len, h = m.hidden, f = m.ffn(), t = p.tp;
  const std::int64_t e = tr.weight_bytes, heads = m.heads / t;
  if (p.recompute == Recompute::full) return n * h * e;  // the layer input only
  // x, ln1, x2, ln2 (h each); qkv 3h/t; attention output h/t; fc1 and GeLU f/t each; 4 fp32 statistics.
  std::int64_t bytes = n * ((4 * h + 4 * h / t + 2 * f / t) * e + 4 * 4);
  if (p.recompute == Recompute::none)
    bytes += tr.scores_materialized ? n * heads * m.seq_len * 4 : n * heads * 4;
  return bytes;
}

std::int64_t head_activation_bytes(const Model& m, const Plan& p, const MemoryTraits& tr) {
  const std::int64_t n = i64(p.micro_batch) * m.seq_len, h = m.hidden;
  // input and final layernorm (h each), logits of the vocabulary shard, 4 fp32 statistics.
  return n * ((2 * h + m.padded_vocab() / p.tp) * tr.weight_bytes + 4 * 4);
}

std::int64_t peak_alive_bytes(const Program& program, const std::vector<std::int64_t>& chunk_bytes) {
  std::int64_t alive = 0, peak = 0;
  for (const Instr& in : program) {
    if (in.op == Op::forward) alive += chunk_bytes[static_cast<std::size_t>(in.chunk)];
    peak = std::max(peak, alive);
    if (in.op == Op::backward) alive -= chunk_bytes[static_cast<std::size_t>(in.chunk)];
  }
  return peak;
}

MemoryBreakdown memory_model(const Model& m, const Plan& p, const MemoryTraits& tr, int pp_rank,
                             const Program& program) {
  MemoryBreakdown mb;
  const std::int64_t params = rank_parameter_count(m, p, pp_rank);
  mb.params = params * tr.weight_bytes;
  mb.grads = params * 4;
  mb.optimizer = params * (8 + (tr.master_weights ? 4 : 0));
  std::vector<std::int64_t> chunk_bytes;  // bytes one micro-batch keeps on each chunk
  for (int c = 0; c < p.virtual_stages; ++c) {
    const ChunkLayout l = chunk_layout(m, p, pp_rank, c);
    chunk_bytes.push_back(i64(l.num_layers) * layer_activation_bytes(m, p, tr) +
                          (l.has_head ? head_activation_bytes(m, p, tr) : 0));
  }
  std::int64_t peak = peak_alive_bytes(program, chunk_bytes);
  if (p.recompute == Recompute::full && peak > 0) {  // one layer recomputed at a time in backward
    Plan again = p;
    again.recompute = Recompute::none;
    peak += layer_activation_bytes(m, again, tr);
  }
  mb.activations = peak;
  return mb;
}

}  // namespace ptdp
