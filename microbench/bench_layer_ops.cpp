// A layer's op benchmarks (see bench_layer_ops.h). Each run records one
// micro-batch of a one-layer chunk, as rank 0 of a shape-only tensor-parallel
// group (the rank's own shard sizes), checks that the call at the record's
// place is the record's (kind and sizes), and times that call again and again.
// tp_comm_overlap is off while recording: its rings run the same GEMMs in row
// blocks, which the cost model prices from the whole ones.
#include "microbench/bench_layer_ops.h"

#include <map>
#include <utility>
#include <vector>

#include "core/comm/shape_only_communicator.h"
#include "core/config/rank_dims.h"
#include "core/model/layer_calls.h"
#include "core/layer_ops/layer_ops.h"
#include "microbench/bench_timing.h"

namespace ptdp::bench {

namespace {

double to_real(std::int64_t v) { return static_cast<double>(v); }

// What one benchmark times: the record at `index` of its pass, or a fused
// record's GEMM or element-wise part alone (fused_part).
struct OpBenchmark {
  std::size_t index;
  LayerOp record;  // the layer's record at `index`
  LayerOp timed;   // the record itself, or its part
  double forward_count = 0, backward_count = 0;  // per single-rank micro-batch (the plan's own ops)

  const RecordingOps::Run& run(const RecordingOps::Call& call) const {
    if (timed.kind == record.kind) return call.whole;
    return timed.kind == kind_traits(record.kind).gemm_part ? call.gemm : call.elementwise;
  }
};

// The layer's call at the benchmark's place, recorded afresh on v's ops (of sizes r).
RecordingOps::Call recorded_call(const OpVariant& v, Device device, const OpBenchmark& b, const RankDims& r) {
  Plan plan = v.cfg.plan;
  plan.tp_comm_overlap = false;  // not a size: r holds for this plan too
  ShapeOnlyCommunicator tp(0, r.t, device);
  const Tensor x = random_tensor(*v.ops, {r.b, r.nr / r.b, r.h});  // this rank's (b, s, h), or (b, s/t, h) rows
  LayerCalls calls = record_layer_calls(*v.ops, tp, v.cfg.model, plan, x);
  return take_call(calls, b.index, b.record);
}

// Work per run: a GEMM's FLOPs and its operands' bytes; a memory-bound op's
// tensors' bytes (what it reads or writes at least: an achieved bandwidth); the
// attention's and a fused op's FLOPs.
Work work_of(const OpBenchmark& b, const RecordingOps::Run& run, double e) {
  const OpKindTraits& t = kind_traits(b.timed.kind);
  const GemmShape& g = b.timed.gemm;
  if (t.basis == CostBasis::gemm) return {g.flops(), e * (g.m * g.k + g.n * g.k + g.m * g.n), t.name};
  if (t.basis == CostBasis::memory) return {0, run.bytes, t.name};
  return {b.timed.flops, 0, t.name};
}

void set_counters(benchmark::State& st, const OpBenchmark& b, const Plan& plan) {
  const OpKindTraits& t = kind_traits(b.timed.kind);
  for (std::size_t i = 0; i < t.sizes.size(); ++i) st.counters[t.sizes[i]] = to_real(b.timed.sizes[i]);
  if (t.basis == CostBasis::gemm) st.counters["batch"] = 1;
  if (t.basis == CostBasis::attention) {
    st.counters["flash"] = plan.attention == Attention::flash ? 1 : 0;
    st.counters["fused_ops"] = plan.fused_ops ? 1 : 0;
  }
  if (b.forward_count > 0) st.counters["op_forward"] = b.forward_count;
  if (b.backward_count > 0) st.counters["op_backward"] = b.backward_count;
}

void register_op(const OpVariant& v, Device device, double peak, std::size_t flush, const OpBenchmark& b,
                 const RankDims& r) {
  const OpKindTraits& t = kind_traits(b.timed.kind);
  std::vector<std::string> names(t.sizes.begin(), t.sizes.end());
  register_guarded(benchmark_name(b.timed) + v.tag, [v, device, peak, flush, b, r](benchmark::State& st) {
    const RecordingOps::Call call = recorded_call(v, device, b, r);
    const RecordingOps::Run& run = b.run(call);
    Timer timer(*v.ops, flush);
    timer.run(st, work_of(b, run, r.e), peak, run.again);
    set_counters(st, b, v.cfg.plan);
  })->Args(b.timed.sizes)->ArgNames(names)->UseManualTime()->Unit(benchmark::kMillisecond);
}

}  // namespace

void register_layer_ops(const OpVariant& v, Device device, double peak_flops, std::size_t flush_bytes) {
  const RankDims r(v.cfg.model, v.cfg.plan);
  const bool own = v.tag.empty();
  const double layers = v.cfg.model.layers;  // a single rank's micro-batch runs every layer
  std::vector<OpBenchmark> benchmarks;
  std::map<std::pair<OpKind, std::vector<std::int64_t>>, std::size_t> at;  // (kind, sizes) -> its benchmark
  const auto add = [&](std::size_t index, const LayerOp& record, const LayerOp& timed) {
    const auto [it, fresh] = at.try_emplace({timed.kind, timed.sizes}, benchmarks.size());
    if (fresh) benchmarks.push_back({index, record, timed});
    return &benchmarks[it->second];
  };
  for (const Pass pass : {Pass::forward, Pass::backward}) {
    const std::vector<LayerOp> ops = layer_ops(v.cfg.model, v.cfg.plan, r, pass);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!v.times(ops[i].kind)) continue;
      OpBenchmark* b = add(i, ops[i], ops[i]);
      if (own) (pass == Pass::forward ? b->forward_count : b->backward_count) += layers;
      const OpKindTraits& t = kind_traits(ops[i].kind);
      if (!own || t.basis != CostBasis::fused) continue;
      for (const OpKind part : {t.gemm_part, t.elementwise_part}) add(i, ops[i], fused_part(ops[i], part));
    }
  }
  for (const OpBenchmark& b : benchmarks) register_op(v, device, peak_flops, flush_bytes, b, r);
}

}  // namespace ptdp::bench
