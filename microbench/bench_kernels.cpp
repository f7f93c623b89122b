// ptdp_bench_kernels: every kernel the training core runs, at the shapes one
// tensor-parallel rank of a configuration issues (--config FILE, or a small
// default GPT), on --device cpu or cuda. A decoder layer's ops come from its
// records (core/layer_ops/layer_ops.h): one benchmark per kind and sizes, each
// timing the very call the layer makes (a recorded one-layer micro-batch,
// core/model/layer_calls.h) and labelled with its kind (core/layer_ops/op_kind.h),
// the key `ptdp calibrate` reads back; a fused op's GEMM is timed alone too.
// The ops the plan's switches change run again with the switch flipped
// ("NAME/unfused_ops" or "NAME/fused_ops"; on cuda "NAME/flash" or
// "NAME/unfused" for the attention core, and "NAME/deterministic"): the paper's
// fused-operator comparison and what determinism costs. Beside them: the output
// layer's GEMMs, the AdamW step and the model's parts (a chunk's layers, the
// embedding and the head, forward and backward). Counters say how often a
// single-rank micro-batch runs each op and part (scripts/op_closure.py). An op
// a backend does not implement yet is a run with error_occurred.
// Letters: n tokens of a micro-batch (b·s), h hidden, f MLP size / t, a heads / t,
// g kv heads on the rank, d head dim, Vt vocabulary / t.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/accounting/flops.h"
#include "core/comm/single_rank.h"
#include "core/comm/world.h"
#include "core/config/chunk_layout.h"
#include "core/config/rank_dims.h"
#include "core/data/token_source.h"
#include "core/model/embedding.h"
#include "core/layer_ops/layer_ops.h"
#include "core/model/lm_head.h"
#include "core/model/transformer_layer.h"
#include "microbench/bench_layer_ops.h"
#include "microbench/bench_setup.h"
#include "microbench/bench_timing.h"

namespace ptdp::bench {
namespace {

double dbl(std::int64_t v) { return static_cast<double>(v); }

// The label of the model's parts that are more than one op (a layer, the
// head): no op kind, so `ptdp calibrate` takes no sample from them. The
// embedding's forward and backward are labelled with their kinds.
constexpr const char* kPart = "part";

// Scratch each timed run overwrites first: on a GPU more than its L2; none on
// the CPU, where training has its small working set warm (bench_timing.h).
std::size_t flush_bytes_for(Device device) { return device == Device::cuda ? 256u << 20 : 0; }

class Suite {
 public:
  Suite(const Options& o, const Config& cfg)
      : opt_(o), cfg_(cfg), x_(cfg.model, cfg.plan), alloc_(make_allocator(o.device, 0)), ops_(make_ops(o.device, cfg, *alloc_)),
        timer_(*ops_, flush_bytes_for(o.device)), peak_(peak_flops(cfg)) {}

  void register_all() {
    if (opt_.device == Device::cuda) {  // made before any benchmark runs, like the other variants' ops
      Config c = cfg_;
      c.plan.deterministic = true;
      deterministic_ops_ = variant(c);
    }
    for (const OpVariant& v : op_variants()) register_layer_ops(v, opt_.device, peak_, flush_bytes());
    register_logits();
    for (const bool det : determinism_modes()) embedding_backward(det);
    register_optimizer_and_layer();
  }

 private:
  // Off, and on where it changes the path: CPU ops are deterministic anyway.
  std::size_t flush_bytes() const { return flush_bytes_for(opt_.device); }
  std::vector<bool> determinism_modes() const {
    return opt_.device == Device::cuda ? std::vector<bool>{false, true} : std::vector<bool>{false};
  }
  static std::string suffix(bool deterministic) { return deterministic ? "/deterministic" : ""; }
  Ops& ops_of(bool deterministic) { return deterministic ? *deterministic_ops_ : *ops_; }

  // The plan's own ops; those fused_ops changes, with it flipped; on cuda the
  // attention core under the other attention (where cuDNN's is available) and deterministic.
  std::vector<OpVariant> op_variants() {
    const auto every = [](OpKind) { return true; };
    const auto not_gemm = [](OpKind k) { return kind_traits(k).basis != CostBasis::gemm; };
    const auto attention = [](OpKind k) { return kind_traits(k).basis == CostBasis::attention; };
    std::vector<OpVariant> out{{cfg_, std::shared_ptr<Ops>(ops_.get(), [](Ops*) {}), "", every}};
    Config flipped = cfg_;
    flipped.plan.fused_ops = !cfg_.plan.fused_ops;
    out.push_back({flipped, variant(flipped), flipped.plan.fused_ops ? "/fused_ops" : "/unfused_ops", not_gemm});
    if (opt_.device != Device::cuda) return out;
    Config other = cfg_;
    other.plan.attention = cfg_.plan.attention == Attention::flash ? Attention::unfused : Attention::flash;
    if (attention_unavailable(Device::cuda, other.plan.attention, x_.head_dim).empty())
      out.push_back({other, variant(other), "/" + to_string(other.plan.attention), attention});
    Config deterministic = cfg_;
    deterministic.plan.deterministic = true;  // cuDNN's backward without atomics in dQ
    out.push_back({deterministic, deterministic_ops_, "/deterministic", attention});
    return out;
  }

  // y (m, n) = x (m, k) · w (n, k)ᵀ: the output layer's GEMMs (not a decoder
  // layer's op), labelled with their kind like the layer's.
  void gemm(OpKind kind, const std::string& role, std::int64_t rows, std::int64_t cols, std::int64_t depth) {
    register_guarded("gemm/" + role, [this, kind](benchmark::State& st) {
      const std::int64_t m = st.range(0), n = st.range(1), k = st.range(2);
      Tensor a = random_tensor(*ops_, {m, k}), w = random_tensor(*ops_, {n, k}, 0.05f), y = ops_->empty({m, n});
      timer_.run(st, {2 * dbl(m) * dbl(n) * dbl(k), x_.e * dbl(m * k + n * k + m * n), kind_traits(kind).name}, peak_,
                 [&] { ops_->linear_forward(a, w, Tensor{}, y); });
      st.counters["m"] = dbl(m), st.counters["n"] = dbl(n), st.counters["k"] = dbl(k), st.counters["batch"] = 1;
    })->Args({rows, cols, depth})->ArgNames({"m", "n", "k"})->UseManualTime()->Unit(benchmark::kMillisecond);
  }

  void register_logits() {
    gemm(OpKind::linear_forward, "logits_fwd", x_.n, x_.vt, x_.h);
    gemm(OpKind::linear_data_grad, "logits_dgrad", x_.n, x_.h, x_.vt);
    gemm(OpKind::linear_weight_grad, "logits_wgrad", x_.vt, x_.h, x_.n);
  }

  // dwte (Vt, h) += dout (b, s, h) rows scattered by token: fp32 atomics, or
  // (deterministic) a sort by token and one fixed-order sum per row. Tokens of
  // the synthetic stream, so they repeat as in training. Effective bytes: dout
  // read once, the touched fp32 rows of dwte read and written.
  void embedding_backward(bool deterministic) {
    const std::string name = "embedding/bwd" + suffix(deterministic);
    register_guarded(name, [this, deterministic](benchmark::State& st) {
      Ops& ops = ops_of(deterministic);
      const std::int64_t b = st.range(0), s = st.range(1), h = st.range(2), vt = st.range(3);
      Tensor tokens = token_tensor(ops, 0), dout = random_tensor(ops, {b, s, h});
      Tensor dwte = ops.zeros({vt, h}, DType::f32);
      Timer timer(ops, flush_bytes());
      const double bytes = x_.e * dbl(b * s * h) + 8 * dbl(std::min(b * s, vt) * h);
      timer.run(st, {0, bytes, kind_traits(OpKind::embedding_backward).name}, peak_,
                [&] { ops.embedding_backward(tokens, dout, 0, dwte); });
      if (!deterministic) st.counters["part_backward"] = 1;
    })->Args({x_.b, x_.s, x_.h, x_.vt})->ArgNames({"b", "s", "h", "Vt"})->UseManualTime()->Unit(benchmark::kMillisecond);
  }

  // How often a single-rank micro-batch runs the layer part: each layer's
  // forward (again in backward where recompute re-runs the whole forward: its
  // recompute records are its forward's) and each layer's backward.
  void micro_batch_counts(benchmark::State& st, bool backward) const {
    const double layers = cfg_.model.layers;
    if (backward) {
      st.counters["part_backward"] = layers;
      return;
    }
    st.counters["part_forward"] = layers;
    const Model& m = cfg_.model;
    if (layer_ops(m, cfg_.plan, x_, Pass::recompute).size() == layer_ops(m, cfg_.plan, x_, Pass::forward).size())
      st.counters["part_backward"] = layers;
  }

  void register_optimizer_and_layer();
  void layer(bool deterministic);
  void ends();
  Tensor token_tensor(Ops& ops, int offset);

  // Ops of a variant of the plan on an allocator of its own: a stream-ordered
  // pool orders its blocks on the stream of the one ops it serves.
  std::shared_ptr<Ops> variant(const Config& c) const {
    std::shared_ptr<Allocator> alloc(make_allocator(opt_.device, 0));
    std::shared_ptr<Ops> ops(make_ops(opt_.device, c, *alloc));
    return {ops.get(), [ops, alloc](Ops*) mutable {
              ops.reset();  // the ops (and its stream) before the allocator it draws on
              alloc.reset();
            }};
  }

  Options opt_;
  Config cfg_;
  RankDims x_;
  std::unique_ptr<Allocator> alloc_;
  std::unique_ptr<Ops> ops_;
  std::shared_ptr<Ops> deterministic_ops_;  // plan.deterministic on (cuda only)
  Timer timer_;
  double peak_;
  SingleRankCommunicator tp_;
};

void Suite::register_optimizer_and_layer() {
  register_guarded("adamw/step", [this](benchmark::State& st) {
    const std::int64_t params = st.range(0);
    Tensor master = ops_->zeros({params}, DType::f32), g = ops_->zeros({params}, DType::f32);
    Tensor m = ops_->zeros({params}, DType::f32), v = ops_->zeros({params}, DType::f32), w = ops_->empty({params});
    Ops::AdamWGroup group{{&master}, {&m}, {&v}, {&w}, {&g}, {0.01f}};
    AdamWParams hp;
    timer_.run(st, {0, dbl(params) * (28 + x_.e), "optimizer"}, peak_, [&] { ops_->adamw_multi(group, hp); });
  })->Args({12 * x_.h * x_.h / x_.t})->ArgNames({"params"})->UseManualTime()->Unit(benchmark::kMillisecond);
  for (const bool det : determinism_modes()) layer(det);
  ends();
}

// Distinct layers the layer benchmark runs in sequence: on the CPU a chunk's
// layers (at most 8), whose weights and activations together outgrow the
// caches that one layer's fit, as in training (one layer's time, run alone, was
// 5-12% below its share of a training forward); on a GPU one, the L2 flush
// standing for the rest.
int distinct_layers(const Config& cfg, Device device) {
  if (device == Device::cuda) return 1;
  return std::clamp(chunk_layout(cfg.model, cfg.plan, 0, 0).num_layers, 1, 8);
}

// One transformer layer forward or backward, timed per layer over a chunk's
// distinct layers run in order (backward in reverse, from their forward's
// activations); deterministic: every reduction in fixed order, cuDNN's
// deterministic backward, untimed GEMM algorithm choices.
void Suite::layer(bool deterministic) {
  for (const bool backward : {false, true})
    register_guarded(std::string(backward ? "layer/bwd" : "layer/fwd") + suffix(deterministic),
                                 [this, backward, deterministic](benchmark::State& st) {
      Ops& ops = ops_of(deterministic);
      ModelContext ctx{ops, tp_, cfg_.model, cfg_.plan};
      const int count = distinct_layers(cfg_, opt_.device);
      std::vector<std::unique_ptr<TransformerLayer>> layers;
      ParamList params;
      for (int i = 0; i < count; ++i) {
        layers.push_back(std::make_unique<TransformerLayer>(ctx, i));
        for (Param* p : layers.back()->params()) params.push_back(p);
      }
      Tensor grads = pack_grads(ops, params);
      Tensor x = random_tensor(ops, {x_.b, x_.s, x_.h}), y;
      std::vector<LayerActs> acts(static_cast<std::size_t>(count));
      const auto forward = [&] {
        y = x;
        for (int i = 0; i < count; ++i) y = layers[i]->forward(y, acts[i], true);
      };
      forward();
      const double fwd = layer_forward_flops(cfg_.model, dbl(x_.b)) / x_.t;
      Timer timer(ops, flush_bytes());
      timer.run(st, {backward ? 2 * fwd : fwd, 0, kPart, count}, peak_, [&] {
        if (!backward) return forward();
        Tensor dy = y;
        for (int i = count - 1; i >= 0; --i) dy = layers[i]->backward(dy, acts[i]);
      });
      st.counters["layers_run"] = count;
      if (!deterministic) micro_batch_counts(st, backward);
    })->Args({x_.h, x_.t, x_.n})->ArgNames({"hidden", "tp", "tokens"})->UseManualTime()->Unit(benchmark::kMillisecond);
}

// The first stage's embedding forward (lookup, all-reduce over t, positions)
// and the last stage's head forward and backward (final layernorm, logits
// through the tied embedding, vocabulary-parallel cross-entropy), on the
// synthetic stream's tokens: with the layers, every op of a micro-batch.
void Suite::ends() {
  register_guarded("embedding/fwd", [this](benchmark::State& st) {
    ModelContext ctx{*ops_, tp_, cfg_.model, cfg_.plan};
    Embedding embedding(ctx);
    Tensor tokens = token_tensor(*ops_, 0), x;
    // Bytes: the looked-up rows and the positions read, the output written.
    timer_.run(st, {0, x_.e * dbl(2 * x_.n * x_.h + x_.s * x_.h), kind_traits(OpKind::embedding_forward).name}, peak_,
               [&] { x = embedding.forward(tokens); });
    st.counters["part_forward"] = 1;
  })->Args({x_.b, x_.s, x_.h})->ArgNames({"b", "s", "h"})->UseManualTime()->Unit(benchmark::kMillisecond);
  for (const bool backward : {false, true})
    register_guarded(backward ? "head/bwd" : "head/fwd", [this, backward](benchmark::State& st) {
      ModelContext ctx{*ops_, tp_, cfg_.model, cfg_.plan};
      LmHead head(ctx, nullptr);
      Tensor grads = pack_grads(*ops_, head.params());
      Tensor x = random_tensor(*ops_, {x_.b, x_.s, x_.h}), targets = token_tensor(*ops_, 1);
      HeadActs acts;
      Tensor losses = head.forward(x, targets, acts);
      const double fwd = 2 * dbl(x_.n) * dbl(x_.h) * dbl(x_.vt);
      timer_.run(st, {backward ? 2 * fwd : fwd, 0, kPart}, peak_, [&] {
        if (backward) head.backward(targets, acts, 1.0);
        else losses = head.forward(x, targets, acts);
      });
      st.counters[backward ? "part_backward" : "part_forward"] = 1;
    })->Args({x_.n, x_.h, x_.vt})->ArgNames({"tokens", "h", "Vt"})->UseManualTime()->Unit(benchmark::kMillisecond);
}

// Tokens (b, s) of the synthetic stream, shifted by `offset` (1: the targets).
Tensor Suite::token_tensor(Ops& ops, int offset) {
  auto source = make_synthetic_source(cfg_.model.vocab, cfg_.plan.seed);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(x_.n)), row(static_cast<std::size_t>(x_.s + 1));
  for (std::int64_t i = 0; i < x_.b; ++i) {
    source->sample(i, static_cast<int>(x_.s), row.data());
    std::copy_n(row.begin() + offset, x_.s, ids.begin() + i * x_.s);
  }
  Tensor t = ops.empty({x_.b, x_.s}, DType::i32);
  ops.upload_i32(ids.data(), t);
  return t;
}

}  // namespace
}  // namespace ptdp::bench

int main(int argc, char** argv) {
  using namespace ptdp;
  const bench::Options o = bench::take_options(argc, argv);
  const Config cfg = bench::shapes_config(o);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  nlohmann::json info = {{"device", o.device}};
  try {  // a backend that cannot start: one clear line, exit 1, never std::terminate
    bench::Suite suite(o, cfg);
    bench::add_context(o, cfg, info, "none");
    suite.register_all();
    benchmark::RunSpecifiedBenchmarks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptdp_bench_kernels: failed: %s\n", e.what());
    return 1;
  }
  benchmark::Shutdown();
  return 0;
}
