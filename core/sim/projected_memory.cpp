// Korthikanti-style activation bytes and Megatron's per-parameter bytes.
#include "core/sim/projected_memory.h"

#include <vector>

#include "core/config/rank_dims.h"
#include "core/model/chunk_layout.h"

namespace ptdp {

namespace {

// A rank's dimensions (RankDims) as doubles, with the switches the activation bytes depend on.
struct Sizes {
  double n, h, f, t, e, scores, heads, vt;
  bool dropout, sp;
};

Sizes sizes(const Model& m, const Plan& p) {
  const RankDims r(m, p);
  Sizes z;
  const auto dbl = [](std::int64_t v) { return static_cast<double>(v); };
  z.n = dbl(r.n), z.h = dbl(r.h), z.f = m.ffn(), z.t = r.t, z.e = r.e, z.heads = dbl(r.a), z.vt = dbl(r.vt);
  z.scores = p.micro_batch * z.heads * m.seq_len * static_cast<double>(m.seq_len);
  z.dropout = m.dropout > 0, z.sp = p.sequence_parallel;
  return z;
}

double layer_bytes(const Sizes& z, const Plan& p, Recompute r) {
  const double replicated_div = z.sp ? z.t : 1.0;
  if (r == Recompute::full) return z.e * z.n * z.h / replicated_div;
  // Inputs of the two layernorms, of QKV and of fc1 (full width), and two dropout masks.
  const double replicated = (4 * z.e * z.n * z.h + (z.dropout ? 2 * z.n * z.h : 0)) / replicated_div;
  // Q, K, V and the projection input (h/t each), GeLU and fc2 inputs (f/t each).
  const double split = z.e * z.n * (4 * z.h + 2 * z.f) / z.t;
  double scores = 0;
  if (p.attention == Attention::flash) scores = 4 * z.n * z.heads;  // fp32 log-sum-exp per (token, head)
  else if (r == Recompute::none) scores = z.scores * (z.e + (z.dropout ? 1 + z.e : 0));
  return replicated + split + scores;
}

}  // namespace

std::int64_t projected_layer_bytes(const Model& m, const Plan& p) {
  return static_cast<std::int64_t>(layer_bytes(sizes(m, p), p, p.recompute));
}

MemoryBreakdown projected_memory(const Model& m, const Plan& p, int pp_rank, const Program& program) {
  const Sizes z = sizes(m, p);
  const double params = static_cast<double>(rank_parameter_count(m, p, pp_rank));
  const bool half = p.precision != Precision::fp32;
  MemoryBreakdown out;
  out.params = static_cast<std::int64_t>(params * z.e);
  out.grads = static_cast<std::int64_t>(params * 4);
  const double state = params * ((half ? 4 : 0) + 8);  // fp32 master weights, Adam m and v
  out.optimizer = static_cast<std::int64_t>(p.distributed_optimizer ? state / p.dp : state);
    std::vector<std::int64_t> chunk_bytes;
  for (int c = 0; c < p.virtual_stages; ++c) {
    const ChunkLayout l = chunk_layout(m, p, pp_rank, c);
    double bytes = l.num_layers * layer_bytes(z, p, p.recompute);
    if (l.has_embedding && z.dropout) bytes += z.n * z.h;    // embedding dropout mask
    if (l.has_head) bytes += z.e * z.n * z.h + (4 + z.e) * z.n * z.vt;  // final layernorm input, logits
    chunk_bytes.push_back(static_cast<std::int64_t>(bytes));
  }
  out.activations = peak_alive_bytes(program, chunk_bytes);
  if (p.recompute != Recompute::none && out.activations > 0)  // the layer being recomputed
    out.activations += static_cast<std::int64_t>(layer_bytes(z, p, Recompute::none));
  return out;
}

bool fits(const Machine& machine, std::int64_t total) {
  return machine.memory_bytes <= 0 || total + machine.memory_reserved_bytes <= machine.memory_bytes;
}

}  // namespace ptdp
