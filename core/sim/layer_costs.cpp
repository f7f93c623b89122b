// The operations of a layer, costed one by one (see layer_costs.h).
#include "core/sim/layer_costs.h"

#include <algorithm>

#include "core/config/rank_dims.h"

namespace ptdp {

PassCost& PassCost::operator+=(const PassCost& o) {
  gemm += o.gemm;
  attention += o.attention;
  memory += o.memory;
  tp_comm += o.tp_comm;
  return *this;
}

PassCost& PassCost::operator-=(const PassCost& o) {
  gemm -= o.gemm;
  attention -= o.attention;
  memory -= o.memory;
  tp_comm -= o.tp_comm;
  return *this;
}

PassCost operator*(double k, const PassCost& c) { return {k * c.gemm, k * c.attention, k * c.memory, k * c.tp_comm}; }

namespace {

// A rank's dimensions (RankDims) as doubles for the cost arithmetic, with the layer's switches.
struct Dims {
  double b, s, n, h, f, heads, d, t, e;  // heads and f are per rank; e = bytes per element
  double kv_heads;                        // key/value heads on this rank (g/t, or 1 replicated when t > g)
  double kv_copies;                       // ranks holding each kv head (t/g when t > g, else 1)
  double hr;                              // width of replicated element-wise work: h, or h/t under SP
  double scores;                          // b·(a/t)·s² attention scores
  bool dropout, fused, sp;
  bool gqa, swiglu, rope, bias;           // the block (model.h); layernorm and rmsnorm cost alike
  double qkv_io() const { return n * d * e * (2 * heads + 2 * kv_heads); }  // q, k, v and the output
};

Dims dims(const Model& m, const Plan& p) {
  const RankDims r(m, p);
  Dims x;
  const auto dbl = [](std::int64_t v) { return static_cast<double>(v); };
  x.b = dbl(r.b), x.s = dbl(r.s), x.n = dbl(r.n), x.h = dbl(r.h), x.t = r.t;
  x.f = dbl(r.f), x.heads = dbl(r.a), x.d = dbl(r.d), x.e = r.e;
  x.kv_heads = dbl(r.g), x.kv_copies = dbl(r.kv_copies);
  x.sp = p.sequence_parallel, x.hr = x.sp ? x.h / x.t : x.h;
  x.scores = x.b * x.heads * x.s * x.s;
  x.dropout = m.dropout > 0, x.fused = p.fused_ops;
  x.gqa = m.kv() != m.heads, x.swiglu = m.activation == Activation::swiglu;
  x.rope = m.position == Position::rope, x.bias = m.bias;
  return x;
}

// Forward GEMM time of a linear layer y (n × out) = x (n × in) · Wᵀ and its
// weight gradient dW (out × in) = dyᵀ · x.
double linear_forward(const DeviceRates& dev, double n, double in, double out) { return dev.gemm_seconds({n, out, in}); }
double linear_weight_grad(const DeviceRates& dev, double n, double in, double out) {
  return dev.gemm_seconds({out, in, n});
}

// Attention core forward: unfused QKᵀ, softmax (fused or three kernels), dropout, ·V; or one fused kernel.
double attention_forward(const Dims& x, const DeviceRates& dev, Attention kind) {
  const double batch = x.b * x.heads;
  if (kind == Attention::flash) {  // causal: about half the blocks of the s×s square
    const double flops = 0.5 * 4 * batch * x.s * x.s * x.d;
    return dev.flash_attention_seconds(flops, x.qkv_io());
  }
  double t = dev.gemm_seconds({x.s, x.s, x.d, batch}) + dev.gemm_seconds({x.s, x.d, x.s, batch});
  t += x.fused ? dev.memory_seconds(2 * x.scores * x.e) : dev.memory_seconds(6 * x.scores * x.e, 3);
  if (x.dropout) t += dev.memory_seconds(x.scores * (2 * x.e + 1));
  if (!x.fused) t += dev.memory_seconds(2 * x.qkv_io(), 4);  // [b,s,a,d] transposes of q, k, v, out
  return t;
}

double attention_backward(const Dims& x, const DeviceRates& dev, Attention kind) {
  const double batch = x.b * x.heads;
  if (kind == Attention::flash) {  // recomputes the scores: 2.5× the forward work
    const double flops = 2.5 * 0.5 * 4 * batch * x.s * x.s * x.d;
    return dev.flash_attention_seconds(flops, 2 * x.qkv_io());
  }
  double t = dev.gemm_seconds({x.s, x.d, x.s, batch}) + dev.gemm_seconds({x.s, x.s, x.d, batch}) +
             dev.gemm_seconds({x.s, x.d, x.s, batch}) + dev.gemm_seconds({x.s, x.d, x.s, batch});
  t += x.fused ? dev.memory_seconds(3 * x.scores * x.e) : dev.memory_seconds(9 * x.scores * x.e, 3);
  if (x.dropout) t += dev.memory_seconds(x.scores * (2 * x.e + 1));
  if (!x.fused) t += dev.memory_seconds(2 * x.qkv_io(), 4);
  return t;
}

// The MLP's activation, in bytes moved and kernels: GeLU reads and writes
// (b, s, f/t), with its bias add fused or apart; SwiGLU reads gate and up
// (b, s, 2f/t) and writes (b, s, f/t), silu and product fused or apart, biases
// on 2f/t apart.
struct Moved {
  double bytes;
  int kernels;
};
Moved mlp_activation(const Dims& x) {
  const double nf = x.n * x.f * x.e;
  if (!x.swiglu) return x.fused ? Moved{2 * nf, 1} : Moved{(x.bias ? 4 : 2) * nf, x.bias ? 2 : 1};
  if (x.fused) return {3 * nf, 1};
  return {5 * nf + (x.bias ? 4 * nf : 0), x.bias ? 3 : 2};
}

// Norms (layernorm or rmsnorm: one read and one write each), biases, the MLP's
// activation, dropout, residual adds and rope of one forward, in bytes and kernels.
double elementwise_forward(const Dims& x, const DeviceRates& dev) {
  const double mask = x.dropout ? 1 : 0;
  const double layernorms = 2 * (2 * x.n * x.hr * x.e);
  // bias + dropout + residual after each row-parallel projection (two per layer)
  const double bias = x.bias ? 2 * x.e : 0;
  const double residual = x.fused ? (3 * x.e + mask) * x.n * x.hr : (3 * x.e + bias + (x.dropout ? 2 * x.e + 1 : 0)) * x.n * x.hr;
  const Moved act = mlp_activation(x);
  const int unfused_residual = 1 + (x.bias ? 1 : 0) + (x.dropout ? 1 : 0);
  int kernels = x.fused ? 4 + act.kernels : 2 + 2 * unfused_residual + act.kernels;
  // RoPE rotates q and k in place: reads and writes (b, s, a/t + g_r, d), one kernel (fused) or two.
  const double rope = x.rope ? 2 * x.n * x.d * x.e * (x.heads + x.kv_heads) : 0;
  if (x.rope) kernels += x.fused ? 1 : 2;
  return dev.memory_seconds(layernorms + 2 * residual + act.bytes + rope, kernels);
}

PassCost tp_comm(const Dims& x, const CommModel& comm, Placement tp, double collectives) {
  PassCost c;
  const double bytes = x.n * x.h * x.e;  // one (b, s, h) activation
  // Each all-reduce becomes an all-gather plus a reduce-scatter under sequence parallelism.
  const double each = x.sp ? comm.all_gather(bytes, tp) + comm.reduce_scatter(bytes, tp) : comm.all_reduce(bytes, tp);
  c.tp_comm = collectives * each;
  return c;
}

// A linear layer's widths on this rank: y (rows, out) = x (rows, in) · Wᵀ.
struct Linear {
  double in, out;
};

double forward_gemm(const DeviceRates& dev, double rows, Linear l) { return linear_forward(dev, rows, l.in, l.out); }
double data_grad_gemm(const DeviceRates& dev, double rows, Linear l) { return dev.gemm_seconds({rows, l.in, l.out}); }

// One ring of tp_comm_overlap (core/model/tp_overlap.h): the GEMM on t blocks of
// n/t rows, and of each of the t−1 transfer steps (the collective's time over
// its t−1 steps) the part longer than one block's GEMM. A reduce-scatter ring
// also adds each arriving (n/t, h) partial sum: read two, write one.
PassCost ring(const Dims& x, const DeviceRates& dev, double block_gemm, double collective_s, bool adds) {
  PassCost c;
  c.gemm = x.t * block_gemm;
  c.tp_comm = (x.t - 1) * std::max(0.0, collective_s / (x.t - 1) - block_gemm);
  if (adds) c.memory = (x.t - 1) * dev.memory_seconds(3 * x.n / x.t * x.h * x.e, 1);
  return c;
}

// The linears of a layer on this rank: the attention's input projection (one
// qkv GEMM of (a/t + 2g/t)·d columns; under grouped-query attention ptdp's
// runtime runs q (a/t·d) and kv (2·g_r·d) as two GEMMs on the same input, so
// `kv` is set apart), the output projection and the MLP (fc1 of f/t columns, or
// gate and up together, 2f/t, under SwiGLU).
struct LayerLinears {
  Linear qkv, kv, proj, fc1, fc2;
  bool split_kv;
  // GEMM time of the attention's input projection (q and kv) by `gemm`.
  template <class Gemm>
  double attention_in(Gemm gemm) const { return split_kv ? gemm(qkv) + gemm(kv) : gemm(qkv); }
};

LayerLinears layer_linears(const Dims& x) {
  const double q = x.heads * x.d, kv = 2 * x.kv_heads * x.d, fc1 = (x.swiglu ? 2 : 1) * x.f;
  const Linear qkv = x.gqa ? Linear{x.h, q} : Linear{x.h, q + kv};
  return {qkv, {x.h, kv}, {q, x.h}, {x.h, fc1}, {x.f, x.h}, x.gqa};
}

// The linears of a layer with their collectives, plain or as rings.
// Forward: all-gather before qkv and fc1, reduce-scatter after proj and fc2.
// Backward: the data gradients of fc2 and proj after the output gradient's
// all-gather, of fc1 and qkv before the reduce-scatter; the weight gradients
// once over all n rows after them (transformer_layer.cpp).
void linears(const Dims& x, const Plan& p, const DeviceRates& dev, const CommModel& comm, Placement tp,
             LayerCosts& c) {
  const LayerLinears L = layer_linears(x);
  const auto wgrad = [&](const Linear& l) { return linear_weight_grad(dev, x.n, l.in, l.out); };
  c.weight_grad.gemm += L.attention_in(wgrad);
  for (const Linear& l : {L.proj, L.fc1, L.fc2}) c.weight_grad.gemm += wgrad(l);
  PassCost &fwd = c.forward, &bwd = c.backward;
  bwd.gemm = c.weight_grad.gemm;
  if (!(p.tp_comm_overlap && x.sp && x.t > 1)) {
    fwd.gemm += L.attention_in([&](const Linear& l) { return forward_gemm(dev, x.n, l); });
    bwd.gemm += L.attention_in([&](const Linear& l) { return data_grad_gemm(dev, x.n, l); });
    for (const Linear& l : {L.proj, L.fc1, L.fc2}) {
      fwd.gemm += forward_gemm(dev, x.n, l);
      bwd.gemm += data_grad_gemm(dev, x.n, l);
    }
    fwd += tp_comm(x, comm, tp, 2);
    bwd += tp_comm(x, comm, tp, 2);
    return;
  }
  const double bytes = x.n * x.h * x.e, rows = x.n / x.t;
  const double gather = comm.all_gather(bytes, tp), scatter = comm.reduce_scatter(bytes, tp);
  const auto fwd_rows = [&](const Linear& l) { return forward_gemm(dev, rows, l); };
  const auto dgrad_rows = [&](const Linear& l) { return data_grad_gemm(dev, rows, l); };
  fwd += ring(x, dev, L.attention_in(fwd_rows), gather, false);
  fwd += ring(x, dev, fwd_rows(L.fc1), gather, false);
  for (const Linear& l : {L.proj, L.fc2}) fwd += ring(x, dev, fwd_rows(l), scatter, true);
  for (const Linear& l : {L.fc2, L.proj}) bwd += ring(x, dev, dgrad_rows(l), gather, false);
  bwd += ring(x, dev, dgrad_rows(L.fc1), scatter, true);
  bwd += ring(x, dev, L.attention_in(dgrad_rows), scatter, true);
}

// Grouped-query attention with t > g: the t/g ranks holding one kv head sum
// its weight (and bias) gradients each micro-batch, fp32, (2·d, h) (+ 2·d).
double replicated_kv_reduce(const Dims& x, const CommModel& comm, Placement tp) {
  if (x.kv_copies <= 1) return 0;
  const double grads = 2 * x.d * x.h + (x.bias ? 2 * x.d : 0);
  const int copies = static_cast<int>(x.kv_copies);
  return comm.all_reduce(4 * grads, Placement{copies, std::min(copies, tp.per_node)});
}

}  // namespace

LayerCosts layer_costs(const Model& m, const Plan& p, const DeviceRates& dev, const CommModel& comm, Placement tp) {
  const Dims x = dims(m, p);
  LayerCosts c;
  PassCost &fwd = c.forward, &bwd = c.backward;
  linears(x, p, dev, comm, tp, c);
  fwd.attention = attention_forward(x, dev, p.attention);
  const double elementwise = elementwise_forward(x, dev);
  fwd.memory += elementwise;
  bwd.attention = attention_backward(x, dev, p.attention);
  bwd.memory += 2 * elementwise;  // reads the saved input and the gradient, writes the gradient
  // Sequence parallelism: the norms' gain (and layernorm's bias) gradients of
  // local rows are all-reduced over t each micro-batch (token_split.h): four
  // (two under rmsnorm) of (h) fp32.
  if (x.sp && x.t > 1) bwd.tp_comm += (m.norm == Norm::layernorm ? 4 : 2) * comm.all_reduce(x.h * 4, tp);
  bwd.tp_comm += replicated_kv_reduce(x, comm, tp);
  if (p.recompute == Recompute::full) c.recompute = fwd;
  if (p.recompute == Recompute::selective) c.recompute.attention = fwd.attention;
  return c;
}

EdgeCosts edge_costs(const Model& m, const Plan& p, const DeviceRates& dev, const CommModel& comm, Placement tp) {
  const Dims x = dims(m, p);
  const double vt = static_cast<double>(m.vocab) / p.tp, mask = x.dropout ? 1 : 0;
  EdgeCosts c;
  // Lookup of the shard's rows, all-reduce over t, position add (none under rope), dropout.
  c.embedding_forward.memory = x.rope ? dev.memory_seconds((2 * x.e + mask) * x.n * x.h, 2)
                                      : dev.memory_seconds((4 * x.e + mask) * x.n * x.h, 3);
  c.embedding_forward.tp_comm = comm.all_reduce(x.n * x.h * x.e, tp);
  c.embedding_backward.memory = dev.memory_seconds(3 * 4 * x.n * x.h, 2);  // fp32 scatter-add of rows
  // Final layernorm, logits (n × V/t), fp32 cross-entropy passes; all-reduce of dlnf in backward.
  c.head_forward.gemm = dev.gemm_seconds({x.n, vt, x.h});
  c.head_forward.memory = dev.memory_seconds(2 * x.n * x.hr * x.e + x.n * vt * (x.e + 16), 5);
  c.head_forward.tp_comm = 3 * comm.all_reduce(x.n * 4, tp);
  c.head_backward.gemm = dev.gemm_seconds({x.n, x.h, vt}) + dev.gemm_seconds({vt, x.h, x.n});
  c.head_backward.memory = dev.memory_seconds(4 * x.n * x.hr * x.e + x.n * vt * (8 + x.e), 3);
  c.head_backward.tp_comm = comm.all_reduce(x.n * x.h * x.e, tp);
  return c;
}

}  // namespace ptdp
