// ptdp_bench_kernels: every kernel the training core runs, at the shapes one
// tensor-parallel rank of a configuration issues (--config FILE, or a small
// default GPT), on --device cpu or cuda: the GEMMs of a layer and of the logits
// (forward, data and weight gradient), attention forward and backward (fused
// and unfused), layernorm, fused vs unfused residual add + layernorm, bias+GeLU
// and scale+mask+softmax, the AdamW step, and the model's parts: a layer
// forward and backward, the embedding forward and the head (final layernorm,
// logits, cross-entropy) forward and backward, which with the embedding
// backward are every op of a micro-batch (scripts/op_closure.py). On cuda the ops whose path plan.deterministic changes (embedding
// backward, cuDNN attention, the layer) run again as "NAME/deterministic": the
// ratio is what it costs.
// A Llama-style block (model.h) adds its own ops at its shapes: RMSNorm, SwiGLU
// and RoPE forward and backward (label "memory", so a calibration's bandwidth
// includes them), q and kv GEMMs of grouped-query attention and fc1 of 2f/t
// columns. An op a backend does not implement yet is a run with error_occurred.
// Letters: n tokens of a micro-batch (b·s), h hidden, f MLP size / t, a heads / t,
// g kv heads on the rank, d head dim, Vt vocabulary / t.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/comm/single_rank.h"
#include "core/comm/world.h"
#include "core/config/rank_dims.h"
#include "core/data/token_source.h"
#include "core/metrics/flops.h"
#include "core/model/chunk_layout.h"
#include "core/model/embedding.h"
#include "core/model/lm_head.h"
#include "core/model/transformer_layer.h"
#include "microbench/bench_setup.h"
#include "microbench/bench_timing.h"

namespace ptdp::bench {
namespace {

double dbl(std::int64_t v) { return static_cast<double>(v); }

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
    register_gemms();
    register_attention();
    register_memory_bound();
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

  // y (m, n) = x (m, k) · w (n, k)ᵀ: the GEMM of every linear pass, by its shape.
  void gemm(const std::string& role, std::int64_t rows, std::int64_t cols, std::int64_t depth) {
    register_guarded("gemm/" + role, [this](benchmark::State& st) {
      const std::int64_t m = st.range(0), n = st.range(1), k = st.range(2);
      Tensor a = random_tensor(*ops_, {m, k}), w = random_tensor(*ops_, {n, k}, 0.05f), y = ops_->empty({m, n});
      timer_.run(st, {2 * dbl(m) * dbl(n) * dbl(k), x_.e * dbl(m * k + n * k + m * n), "gemm"}, peak_,
                 [&] { ops_->linear_forward(a, w, Tensor{}, y); });
      st.counters["m"] = dbl(m), st.counters["n"] = dbl(n), st.counters["k"] = dbl(k), st.counters["batch"] = 1;
    })->Args({rows, cols, depth})->ArgNames({"m", "n", "k"})->UseManualTime()->Unit(benchmark::kMillisecond);
  }

  // A linear layer (in -> out) as forward, data-gradient and weight-gradient GEMMs.
  void linear(const std::string& name, std::int64_t in, std::int64_t out) {
    gemm(name + "_fwd", x_.n, out, in);
    gemm(name + "_dgrad", x_.n, in, out);
    gemm(name + "_wgrad", out, in, x_.n);
  }

  void register_gemms() {
    if (cfg_.model.kv() == cfg_.model.heads) {
      linear("qkv", x_.h, 3 * x_.a * x_.d);
    } else {  // grouped-query attention: q and kv are two GEMMs on the same input
      linear("q", x_.h, x_.a * x_.d);
      linear("kv", x_.h, 2 * x_.g * x_.d);
    }
    linear("proj", x_.a * x_.d, x_.h);
    linear("fc1", x_.h, (cfg_.model.activation == Activation::swiglu ? 2 : 1) * x_.f);
    linear("fc2", x_.f, x_.h);
    linear("logits", x_.h, x_.vt);
  }

  // Attention of `variant` (its own ops: cuDNN's fused attention, or the unfused
  // GEMM-softmax-GEMM path with fused or unfused softmax) on q (b, s, a, d) and
  // kv (b, s, g, 2, d). TFLOP/s from the same full-square count 4·b·a·s²·d
  // (backward 2×) for every variant, so the rates compare the paths directly.
  void attention(const std::string& name, Attention kind, bool fused_ops, bool deterministic = false) {
    Config c = cfg_;
    c.plan.attention = kind, c.plan.fused_ops = fused_ops, c.plan.deterministic = deterministic;
    auto ops = variant(c);
    const char* label = kind == Attention::flash ? "flash_attention" : "attention";
    for (const bool backward : {false, true})
      register_guarded("attention/" + name + (backward ? "_bwd" : "_fwd") + suffix(deterministic),
                                   [this, ops, label, backward](benchmark::State& st) {
        const std::int64_t b = st.range(0), s = st.range(1), a = st.range(2), d = st.range(3), g = st.range(4);
        Tensor q = random_tensor(*ops, {b, s, a, d}), kv = random_tensor(*ops, {b, s, g, 2, d});
        Tensor out = ops->empty({b, s, a, d}), dq = ops->empty({b, s, a, d}), dkv = ops->empty({b, s, g, 2, d});
        const double flops = 4 * dbl(b) * dbl(a) * dbl(s) * dbl(s) * dbl(d) * (backward ? 2 : 1);
        Tensor saved = ops->attention_forward(q, kv, out);
        Timer timer(*ops, flush_bytes());
        timer.run(st, {flops, 0, label}, peak_, [&] {
          if (backward) ops->attention_backward(out, q, kv, out, saved, dq, dkv);
          else saved = ops->attention_forward(q, kv, out);
        });
      })->Args({x_.b, x_.s, x_.a, x_.d, x_.g})->ArgNames({"b", "s", "heads", "d", "kv_heads"})
        ->UseManualTime()->Unit(benchmark::kMillisecond);
  }

  void register_attention() {
    attention("unfused_fused_softmax", Attention::unfused, true);  // the paper's fused scale+mask+softmax
    attention("unfused_unfused_softmax", Attention::unfused, false);
    if (opt_.device == Device::cuda && attention_unavailable(Device::cuda, Attention::flash).empty())
      for (const bool det : determinism_modes())  // deterministic: no atomics in cuDNN's dQ
        attention("cudnn_flash", Attention::flash, true, det);  // cuDNN's SDPA on tensor cores
  }

  void layernorm() {
    for (const bool backward : {false, true})
      register_guarded(backward ? "layernorm/bwd" : "layernorm/fwd", [this, backward](benchmark::State& st) {
        const std::int64_t n = st.range(0), h = st.range(1);
        Tensor x = random_tensor(*ops_, {n, h}), g = random_tensor(*ops_, {h}), beta = ops_->zeros({h}), y = ops_->empty({n, h});
        Tensor mean = ops_->empty({n}, DType::f32), rstd = ops_->empty({n}, DType::f32);
        Tensor dg = ops_->zeros({h}, DType::f32), db = ops_->zeros({h}, DType::f32);
        ops_->layernorm_forward(x, g, beta, y, mean, rstd);
        // Effective bytes, the least any kernel must move: forward reads x and
        // writes y, backward reads dy and x and writes dx (here over dy); both
        // touch mean and rstd (fp32). gamma, beta and their fp32 gradients are
        // O(h) and left out. The CUDA backward reads dy and x twice (dx, then
        // the dgamma/dbeta column sums), so its real traffic is 5/3 of this.
        const double bytes = (backward ? 3 : 2) * x_.e * dbl(n * h) + 8 * dbl(n);
        timer_.run(st, {0, bytes, "memory"}, peak_, [&] {
          if (backward) ops_->layernorm_backward(y, x, g, mean, rstd, y, dg, db);
          else ops_->layernorm_forward(x, g, beta, y, mean, rstd);
        });
      })->Args({x_.n, x_.h})->ArgNames({"n", "h"})->UseManualTime()->Unit(benchmark::kMillisecond);
  }

  // x2 = y + bias + x and ln2 = LN(x2), the attention block's residual add and
  // the layernorm after it: one kernel (fused) or bias_residual_add then
  // layernorm_forward (unfused: with fused_ops off the add is bias_add + add).
  // Effective bytes: read y and x, write x2 and ln2, plus mean and rstd (fp32).
  void residual_layernorm(bool fused) {
    Config c = cfg_;
    c.plan.fused_ops = fused;
    auto ops = variant(c);
    const std::string name = std::string("residual_layernorm/") + (fused ? "fused" : "unfused");
    register_guarded(name, [this, ops](benchmark::State& st) {
      const std::int64_t n = st.range(0), h = st.range(1);
      Tensor y = random_tensor(*ops, {n, h}), x = random_tensor(*ops, {n, h}), sum = ops->empty({n, h}), ln = ops->empty({n, h});
      Tensor b = ops->zeros({h}), g = ops->zeros({h}), beta = ops->zeros({h});
      Tensor mean = ops->empty({n}, DType::f32), rstd = ops->empty({n}, DType::f32);
      Timer timer(*ops, flush_bytes());
      timer.run(st, {0, 4 * x_.e * dbl(n * h) + 8 * dbl(n), "memory"}, peak_,
                [&] { ops->bias_residual_layernorm(y, b, x, g, beta, sum, ln, mean, rstd); });
    })->Args({x_.n, x_.h})->ArgNames({"n", "h"})->UseManualTime()->Unit(benchmark::kMillisecond);
  }

  // fc1 with its bias and GeLU, forward (y = gelu(x·w1ᵀ + b1)) and the backward
  // through fc2 that the fusion changes (dpre = (dy·w2) ∘ gelu'(pre), db1, dw2):
  // fused (GELU_AUX_BIAS and DGELU_BGRAD cuBLASLt epilogues) or unfused (plain
  // GEMMs, then bias, GeLU, GeLU-gradient and bias-gradient kernels).
  void bias_gelu(bool fused, bool backward) {
    Config c = cfg_;
    c.plan.fused_ops = fused;
    auto ops = variant(c);
    const std::string name = std::string("bias_gelu/") + (fused ? "fused" : "unfused") + (backward ? "_bwd" : "");
    register_guarded(name, [this, ops, backward](benchmark::State& st) {
      const std::int64_t n = st.range(0), f = st.range(1), h = st.range(2);
      Tensor x = random_tensor(*ops, {n, h}), w = random_tensor(*ops, {f, h}, 0.05f), b = ops->zeros({f}), pre = random_tensor(*ops, {n, f});
      Tensor y = random_tensor(*ops, {n, f});
      Timer timer(*ops, flush_bytes());
      if (!backward) {
        timer.run(st, {2 * dbl(n) * dbl(f) * dbl(h), 0, "fused_op"}, peak_, [&] { ops->linear_gelu_forward(x, w, b, pre, y); });
        return;
      }
      Tensor dy = random_tensor(*ops, {n, h}), w2 = random_tensor(*ops, {h, f}, 0.05f), dpre = ops->empty({n, f});
      Tensor dw2 = ops->zeros({h, f}, DType::f32), db2 = ops->zeros({h}, DType::f32), db1 = ops->zeros({f}, DType::f32);
      timer.run(st, {4 * dbl(n) * dbl(f) * dbl(h), 0, "fused_op"}, peak_,
                [&] { ops->linear_gelu_backward(dy, y, pre, w2, dpre, dw2, db2, db1); });
    })->Args({x_.n, x_.f, x_.h})->ArgNames({"n", "f", "h"})->UseManualTime()->Unit(benchmark::kMillisecond);
  }

  // Element-wise passes over (rows, cols) in the compute type; `arrays` of
  // them are read or written once each (GeLU forward 2, its gradient 3, the
  // residual add 3), which is all the traffic there is.
  void elementwise(const std::string& name, int arrays, std::int64_t rows, std::int64_t cols) {
    register_guarded("elementwise/" + name, [this, name, arrays](benchmark::State& st) {
      const std::int64_t r = st.range(0), c = st.range(1);
      Tensor a = random_tensor(*ops_, {r, c}), b = random_tensor(*ops_, {r, c}), out = ops_->empty({r, c});
      timer_.run(st, {0, arrays * x_.e * dbl(r * c), "memory"}, peak_, [&] {
        if (name == "gelu_fwd") ops_->gelu_forward(a, out);
        else if (name == "gelu_bwd") ops_->gelu_backward(a, b, out);
        else ops_->add(a, b, out);
      });
    })->Args({rows, cols})->ArgNames({"rows", "cols"})->UseManualTime()->Unit(benchmark::kMillisecond);
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
      timer.run(st, {0, bytes, "memory"}, peak_, [&] { ops.embedding_backward(tokens, dout, 0, dwte); });
    })->Args({x_.b, x_.s, x_.h, x_.vt})->ArgNames({"b", "s", "h", "Vt"})->UseManualTime()->Unit(benchmark::kMillisecond);
  }

  // RMSNorm over (n, h): forward reads x, writes y; backward reads dy and x,
  // writes dx; both touch rstd (n, fp32). gamma and its gradient are O(h).
  void rmsnorm() {
    for (const bool backward : {false, true})
      register_guarded(backward ? "rmsnorm/bwd" : "rmsnorm/fwd", [this, backward](benchmark::State& st) {
        const std::int64_t n = st.range(0), h = st.range(1);
        Tensor x = random_tensor(*ops_, {n, h}), g = random_tensor(*ops_, {h}), y = ops_->empty({n, h});
        Tensor rstd = ops_->empty({n}, DType::f32), dg = ops_->zeros({h}, DType::f32);
        const double bytes = (backward ? 3 : 2) * x_.e * dbl(n * h) + 4 * dbl(n);
        ops_->rmsnorm_forward(x, g, y, rstd);
        timer_.run(st, {0, bytes, "memory"}, peak_, [&] {
          if (backward) ops_->rmsnorm_backward(y, x, g, rstd, y, dg);
          else ops_->rmsnorm_forward(x, g, y, rstd);
        });
      })->Args({x_.n, x_.h})->ArgNames({"n", "h"})->UseManualTime()->Unit(benchmark::kMillisecond);
  }

  // SwiGLU on pre (n, 2f) = [gate | up]: forward reads pre, writes y (n, f)
  // (3 arrays of (n, f)); backward reads dy and pre, writes dpre (5 arrays).
  void swiglu() {
    for (const bool backward : {false, true})
      register_guarded(backward ? "swiglu/bwd" : "swiglu/fwd", [this, backward](benchmark::State& st) {
        const std::int64_t n = st.range(0), f = st.range(1);
        Tensor pre = random_tensor(*ops_, {n, 2 * f}), y = ops_->empty({n, f}), dpre = ops_->empty({n, 2 * f});
        const double bytes = (backward ? 5 : 3) * x_.e * dbl(n * f);
        timer_.run(st, {0, bytes, "memory"}, peak_, [&] {
          if (backward) ops_->swiglu_backward(y, pre, dpre);
          else ops_->swiglu_forward(pre, y);
        });
      })->Args({x_.n, x_.f})->ArgNames({"n", "f"})->UseManualTime()->Unit(benchmark::kMillisecond);
  }

  // RoPE in place on q (b, s, a, d) and kv's k half (b, s, g, 2, d): reads and
  // writes q and k, 2·n·(a + g)·d elements (backward the same on dq and dk).
  void rope() {
    for (const bool backward : {false, true})
      register_guarded(backward ? "rope/bwd" : "rope/fwd", [this, backward](benchmark::State& st) {
        const std::int64_t b = st.range(0), s = st.range(1), a = st.range(2), d = st.range(3), g = st.range(4);
        Tensor q = random_tensor(*ops_, {b, s, a, d}), kv = random_tensor(*ops_, {b, s, g, 2, d});
        const double bytes = 2 * x_.e * dbl(b * s * (a + g) * d), theta = cfg_.model.rope_theta;
        timer_.run(st, {0, bytes, "memory"}, peak_, [&] {
          if (backward) ops_->rope_backward(q, kv, theta);
          else ops_->rope_forward(q, kv, theta);
        });
      })->Args({x_.b, x_.s, x_.a, x_.d, x_.g})->ArgNames({"b", "s", "heads", "d", "kv_heads"})
        ->UseManualTime()->Unit(benchmark::kMillisecond);
  }

  void register_memory_bound() {
    const Model& m = cfg_.model;
    if (m.norm == Norm::rmsnorm) rmsnorm();
    if (m.activation == Activation::swiglu) swiglu();
    if (m.position == Position::rope) rope();
    for (const bool det : determinism_modes()) embedding_backward(det);
    layernorm();
    residual_layernorm(true);
    residual_layernorm(false);
    for (bool backward : {false, true}) {
      bias_gelu(true, backward);
      bias_gelu(false, backward);
    }
    elementwise("gelu_fwd", 2, x_.n, x_.f);
    elementwise("gelu_bwd", 3, x_.n, x_.f);
    elementwise("residual_add", 3, x_.n, x_.h);
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
      timer.run(st, {backward ? 2 * fwd : fwd, 0, "layer", count}, peak_, [&] {
        if (!backward) return forward();
        Tensor dy = y;
        for (int i = count - 1; i >= 0; --i) dy = layers[i]->backward(dy, acts[i]);
      });
      st.counters["layers_run"] = count;
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
    timer_.run(st, {0, x_.e * dbl(2 * x_.n * x_.h + x_.s * x_.h), "memory"}, peak_, [&] { x = embedding.forward(tokens); });
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
      timer_.run(st, {backward ? 2 * fwd : fwd, 0, "layer"}, peak_, [&] {
        if (backward) head.backward(targets, acts, 1.0);
        else losses = head.forward(x, targets, acts);
      });
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
