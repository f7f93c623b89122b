// The operations of a layer, costed one by one (see layer_costs.h).
#include "core/sim/layer_costs.h"

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
  double hr;                              // width of replicated element-wise work: h, or h/t under SP
  double scores;                          // b·(a/t)·s² attention scores
  bool dropout, fused, sp;
};

Dims dims(const Model& m, const Plan& p) {
  const RankDims r(m, p);
  Dims x;
  const auto dbl = [](std::int64_t v) { return static_cast<double>(v); };
  x.b = dbl(r.b), x.s = dbl(r.s), x.n = dbl(r.n), x.h = dbl(r.h), x.t = r.t;
  x.f = dbl(r.f), x.heads = dbl(r.a), x.d = dbl(r.d), x.e = r.e;
  x.sp = p.sequence_parallel, x.hr = x.sp ? x.h / x.t : x.h;
  x.scores = x.b * x.heads * x.s * x.s;
  x.dropout = m.dropout > 0, x.fused = p.fused_ops;
  return x;
}

// Forward GEMM time of a linear layer y (n × out) = x (n × in) · Wᵀ, its
// weight gradient dW (out × in) = dyᵀ · x, and its backward (dgrad + wgrad).
double linear_forward(const DeviceRates& dev, double n, double in, double out) { return dev.gemm_seconds({n, out, in}); }
double linear_weight_grad(const DeviceRates& dev, double n, double in, double out) {
  return dev.gemm_seconds({out, in, n});
}
double linear_backward(const DeviceRates& dev, double n, double in, double out) {
  return dev.gemm_seconds({n, in, out}) + linear_weight_grad(dev, n, in, out);
}

// Attention core forward: unfused QKᵀ, softmax (fused or three kernels), dropout, ·V; or one fused kernel.
double attention_forward(const Dims& x, const DeviceRates& dev, Attention kind) {
  const double batch = x.b * x.heads;
  if (kind == Attention::flash) {  // causal: about half the blocks of the s×s square
    const double flops = 0.5 * 4 * batch * x.s * x.s * x.d;
    return dev.flash_attention_seconds(flops, 4 * x.n * x.heads * x.d * x.e);
  }
  double t = dev.gemm_seconds({x.s, x.s, x.d, batch}) + dev.gemm_seconds({x.s, x.d, x.s, batch});
  t += x.fused ? dev.memory_seconds(2 * x.scores * x.e) : dev.memory_seconds(6 * x.scores * x.e, 3);
  if (x.dropout) t += dev.memory_seconds(x.scores * (2 * x.e + 1));
  if (!x.fused) t += dev.memory_seconds(8 * x.n * x.heads * x.d * x.e, 4);  // [b,s,a,d] transposes
  return t;
}

double attention_backward(const Dims& x, const DeviceRates& dev, Attention kind) {
  const double batch = x.b * x.heads;
  if (kind == Attention::flash) {  // recomputes the scores: 2.5× the forward work
    const double flops = 2.5 * 0.5 * 4 * batch * x.s * x.s * x.d;
    return dev.flash_attention_seconds(flops, 8 * x.n * x.heads * x.d * x.e);
  }
  double t = dev.gemm_seconds({x.s, x.d, x.s, batch}) + dev.gemm_seconds({x.s, x.s, x.d, batch}) +
             dev.gemm_seconds({x.s, x.d, x.s, batch}) + dev.gemm_seconds({x.s, x.d, x.s, batch});
  t += x.fused ? dev.memory_seconds(3 * x.scores * x.e) : dev.memory_seconds(9 * x.scores * x.e, 3);
  if (x.dropout) t += dev.memory_seconds(x.scores * (2 * x.e + 1));
  if (!x.fused) t += dev.memory_seconds(8 * x.n * x.heads * x.d * x.e, 4);
  return t;
}

// Layernorms, biases, GeLU, dropout and residual adds of one forward, in bytes and kernels.
double elementwise_forward(const Dims& x, const DeviceRates& dev) {
  const double mask = x.dropout ? 1 : 0;
  const double layernorms = 2 * (2 * x.n * x.hr * x.e);
  // bias + dropout + residual after each row-parallel projection (two per layer)
  const double residual = x.fused ? (3 * x.e + mask) * x.n * x.hr : (5 * x.e + (x.dropout ? 2 * x.e + 1 : 0)) * x.n * x.hr;
  const double gelu = (x.fused ? 2 : 4) * x.n * x.f * x.e;
  const int kernels = x.fused ? 5 : (x.dropout ? 10 : 8);
  return dev.memory_seconds(layernorms + 2 * residual + gelu, kernels);
}

PassCost tp_comm(const Dims& x, const CommModel& comm, Placement tp, double collectives) {
  PassCost c;
  const double bytes = x.n * x.h * x.e;  // one (b, s, h) activation
  // Each all-reduce becomes an all-gather plus a reduce-scatter under sequence parallelism.
  const double each = x.sp ? comm.all_gather(bytes, tp) + comm.reduce_scatter(bytes, tp) : comm.all_reduce(bytes, tp);
  c.tp_comm = collectives * each;
  return c;
}

}  // namespace

LayerCosts layer_costs(const Model& m, const Plan& p, const DeviceRates& dev, const CommModel& comm, Placement tp) {
  const Dims x = dims(m, p);
  LayerCosts c;
  PassCost& fwd = c.forward;
  fwd.gemm = linear_forward(dev, x.n, x.h, 3 * x.h / x.t) + linear_forward(dev, x.n, x.h / x.t, x.h) +
             linear_forward(dev, x.n, x.h, x.f) + linear_forward(dev, x.n, x.f, x.h);
  fwd.attention = attention_forward(x, dev, p.attention);
  fwd.memory = elementwise_forward(x, dev);
  fwd += tp_comm(x, comm, tp, 2);
  PassCost& bwd = c.backward;
  bwd.gemm = linear_backward(dev, x.n, x.h, 3 * x.h / x.t) + linear_backward(dev, x.n, x.h / x.t, x.h) +
             linear_backward(dev, x.n, x.h, x.f) + linear_backward(dev, x.n, x.f, x.h);
  bwd.attention = attention_backward(x, dev, p.attention);
  bwd.memory = 2 * fwd.memory;  // reads the saved input and the gradient, writes the gradient
  bwd += tp_comm(x, comm, tp, 2);
  c.weight_grad.gemm = linear_weight_grad(dev, x.n, x.h, 3 * x.h / x.t) + linear_weight_grad(dev, x.n, x.h / x.t, x.h) +
                       linear_weight_grad(dev, x.n, x.h, x.f) + linear_weight_grad(dev, x.n, x.f, x.h);
  if (p.recompute == Recompute::full) c.recompute = fwd;
  if (p.recompute == Recompute::selective) c.recompute.attention = fwd.attention;
  return c;
}

EdgeCosts edge_costs(const Model& m, const Plan& p, const DeviceRates& dev, const CommModel& comm, Placement tp) {
  const Dims x = dims(m, p);
  const double vt = static_cast<double>(m.vocab) / p.tp, mask = x.dropout ? 1 : 0;
  EdgeCosts c;
  // Lookup of the shard's rows, all-reduce over t, position add, dropout.
  c.embedding_forward.memory = dev.memory_seconds((4 * x.e + mask) * x.n * x.h, 3);
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
