// The CUDA backend as the model uses it: cuBLASLt linear layers and both
// attention paths (grouped-query) against the CPU reference, fused and unfused
// variants in agreement, a small GPT and a small Llama trained on one GPU
// against the CPU backend, and fp16 loss scaling skipping a step on an
// overflow. Skipped without a GPU.
#include <cmath>

#include "core/comm/nccl_communicator.h"
#include "core/comm/process_groups.h"
#include "core/comm/single_rank.h"
#include "core/data/token_source.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/kernels/cpu/linear.h"
#include "core/kernels/cuda/cuda_ops.h"
#include "core/runtime/trainer.h"
#include "tests/gpu/cpu_reference.h"
#include "tests/gpu/cuda_ops_harness.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

using gputest::expect_close;
using gputest::Gpu;

TEST(CudaOps, LinearForwardAndBackwardMatchTheCpu) {
  PTDP_REQUIRE_GPU();
  Gpu g;
  std::mt19937 rng(3);
  const std::int64_t n = 37, k = 100, m = 70;  // no tile multiple
  const auto x = gputest::random_values<__nv_bfloat16>(rng, n * k), w = gputest::random_values<__nv_bfloat16>(rng, m * k);
  const auto bias = gputest::random_values<__nv_bfloat16>(rng, m), dy = gputest::random_values<__nv_bfloat16>(rng, n * m);
  const auto dw0 = gputest::random_values<float>(rng, m * k);
  Tensor tx = g.upload(x, {n, k}, DType::bf16), tw = g.upload(w, {m, k}, DType::bf16);
  Tensor tb = g.upload(bias, {m}, DType::bf16), tdy = g.upload(dy, {n, m}, DType::bf16);
  Tensor ty = g.ops.empty({n, m}), tdx = g.ops.empty({n, k}), tdw = g.upload(dw0, {m, k}, DType::f32);
  Tensor tdb = g.ops.zeros({m}, DType::f32);
  g.ops.linear_forward(tx, tw, tb, ty);
  g.ops.linear_backward(tdy, tx, tw, tdx, tdw, tdb);
  std::vector<float> y(static_cast<std::size_t>(n * m)), dx(static_cast<std::size_t>(n * k)), dw = dw0;
  std::vector<float> db(static_cast<std::size_t>(m), 0.0f);
  cpu::linear_forward(x.data(), w.data(), bias.data(), n, k, m, y.data());
  cpu::linear_backward(dy.data(), x.data(), w.data(), n, k, m, dx.data(), dw.data(), db.data());
  expect_close<__nv_bfloat16>(g.download(ty), y, gputest::reduction<__nv_bfloat16>(k), "y");
  expect_close<__nv_bfloat16>(g.download(tdx), dx, gputest::reduction<__nv_bfloat16>(m), "dx");
  expect_close<float>(g.download(tdw), dw, gputest::fp32_reduction(n), "dw (accumulated into its old value)");
  expect_close<float>(g.download(tdb), db, gputest::fp32_reduction(n), "dbias");
}

// q (b, s, a, d), kv (b, s, g, 2, d) through a backend's attention, forward and backward.
struct AttentionRun {
  std::vector<float> out, dq, dkv;
};

template <class Harness>
AttentionRun run_attention(Harness& h, const std::vector<float>& q, const std::vector<float>& kv,
                           const std::vector<float>& dout, const Shape& q_shape, const Shape& kv_shape) {
  Tensor tq = h.upload(q, q_shape), tkv = h.upload(kv, kv_shape), tdo = h.upload(dout, q_shape);
  Tensor out = h.ops.empty(q_shape), dq = h.ops.empty(q_shape), dkv = h.ops.empty(kv_shape);
  Tensor saved = h.ops.attention_forward(tq, tkv, out);
  h.ops.attention_backward(tdo, tq, tkv, out, saved, dq, dkv);
  return {h.download(out), h.download(dq), h.download(dkv)};
}

// Grouped-query attention (a = 4 query heads on g = 2 kv heads), s = 45 not a tile multiple.
TEST(CudaOps, FusedAndUnfusedAttentionMatchTheCpuAndEachOther) {
  PTDP_REQUIRE_GPU();
  const std::int64_t b = 2, s = 45, a = 4, g = 2, head_dim = 32;
  const Shape q_shape{b, s, a, head_dim}, kv_shape{b, s, g, 2, head_dim};
  std::mt19937 rng(5);
  const auto q = gputest::random_values<__nv_bfloat16>(rng, b * s * a * head_dim);
  const auto kv = gputest::random_values<__nv_bfloat16>(rng, b * s * g * 2 * head_dim);
  const auto dout = gputest::random_values<__nv_bfloat16>(rng, b * s * a * head_dim);
  gputest::CpuReference cpu;
  const AttentionRun ref = run_attention(cpu, q, kv, dout, q_shape, kv_shape);
  for (Attention kind : {Attention::flash, Attention::unfused})
    for (bool fused : {true, false}) {
      Gpu gpu(DType::bf16, fused, kind);
      const AttentionRun r = run_attention(gpu, q, kv, dout, q_shape, kv_shape);
      const std::string what = std::string(kind == Attention::flash ? "flash" : "unfused") + (fused ? "" : ", unfused ops");
      using BF = __nv_bfloat16;
      expect_close<BF>(r.out, ref.out, gputest::attention_out<BF>(s), what + ": out");
      expect_close<BF>(r.dq, ref.dq, gputest::attention_grad<BF>(s, head_dim), what + ": dq");
      expect_close<BF>(r.dkv, ref.dkv, gputest::attention_kv_grad<BF>(s, head_dim, a / g), what + ": dkv");
    }
}

Config tiny_gpt(Precision precision) {
  Config c;
  c.model = {2, 64, 4, 16, 128, 0, 0};
  c.plan.micro_batch = 2;
  c.plan.global_batch = 8;
  c.plan.precision = precision;
  c.optimizer.lr = 3e-3;
  return c;
}

std::vector<IterationRecord> train(const Config& cfg, Ops& ops, Communicator& world, int iterations) {
  ProcessGroups groups = make_process_groups(world, {1, 1, 1, 1});
  auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  Trainer trainer(cfg, ops, groups, *data);
  std::vector<IterationRecord> out;
  for (int i = 0; i < iterations; ++i) out.push_back(trainer.step(i));
  return out;
}

// bf16 keeps 8 bits: activations and weights rounded at every layer move the
// loss (≈ 4.8 nats) by a few u16 relative per iteration; 3% bounds 5 iterations.
TEST(CudaTraining, ASmallGptOnOneGpuMatchesTheCpuBackend) {
  PTDP_REQUIRE_GPU();
  CpuAllocator cpu_alloc;
  CpuOps cpu(cpu_alloc);
  SingleRankCommunicator cpu_world;
  const auto reference = train(tiny_gpt(Precision::fp32), cpu, cpu_world, 5);
  for (Attention kind : {Attention::flash, Attention::unfused})
    for (bool fused : {true, false}) {  // the fused-operator switch: epilogues and fused kernels, or separate ones
      Gpu g(DType::bf16, fused, kind);
      auto world = NcclCommunicator::create_world(std::make_unique<SingleRankCommunicator>(), g.ops.stream(), 60);
      Config cfg = tiny_gpt(Precision::bf16);
      cfg.plan.attention = kind;
      cfg.plan.fused_ops = fused;
      const auto gpu = train(cfg, g.ops, *world, 5);
      for (std::size_t i = 0; i < gpu.size(); ++i)
        EXPECT_NEAR(gpu[i].loss, reference[i].loss, 0.03 * reference[i].loss)
            << "iteration " << i << (fused ? "" : ", unfused ops");
    }
}

// The tiny Llama of endtoend/configs/tiny-llama.json (grouped-query attention
// with a = 4, g = 2, RMSNorm, SwiGLU, RoPE, no biases, an untied output layer),
// shortened to s = 16, bf16 on one GPU against the CPU backend, by the GPT's bound.
Config tiny_llama(Precision precision) {
  Config c = tiny_gpt(precision);
  c.model.layers = 4, c.model.kv_heads = 2, c.model.ffn_hidden = 96;
  c.model.norm = Norm::rmsnorm, c.model.activation = Activation::swiglu, c.model.position = Position::rope;
  c.model.bias = false, c.model.tied_embeddings = false;
  return c;
}

TEST(CudaTraining, ASmallLlamaOnOneGpuMatchesTheCpuBackend) {
  PTDP_REQUIRE_GPU();
  CpuAllocator cpu_alloc;
  CpuOps cpu(cpu_alloc);
  SingleRankCommunicator cpu_world;
  const auto reference = train(tiny_llama(Precision::fp32), cpu, cpu_world, 5);
  for (Attention kind : {Attention::flash, Attention::unfused}) {
    Gpu g(DType::bf16, true, kind);
    auto world = NcclCommunicator::create_world(std::make_unique<SingleRankCommunicator>(), g.ops.stream(), 60);
    Config cfg = tiny_llama(Precision::bf16);
    cfg.plan.attention = kind;
    const auto gpu = train(cfg, g.ops, *world, 5);
    for (std::size_t i = 0; i < gpu.size(); ++i)
      EXPECT_NEAR(gpu[i].loss, reference[i].loss, 0.03 * reference[i].loss)
          << "iteration " << i << (kind == Attention::flash ? ", flash" : ", unfused attention");
  }
}

TEST(CudaTraining, Fp16LossScalingSkipsAStepOnAnOverflow) {
  PTDP_REQUIRE_GPU();
  Gpu g(DType::f16);
  auto world = NcclCommunicator::create_world(std::make_unique<SingleRankCommunicator>(), g.ops.stream(), 60);
  const Config cfg = tiny_gpt(Precision::fp16);
  ProcessGroups groups = make_process_groups(*world, {1, 1, 1, 1});
  auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  Trainer trainer(cfg, g.ops, groups, *data);
  const IterationRecord first = trainer.step(0);
  EXPECT_FALSE(first.skipped);
  EXPECT_DOUBLE_EQ(first.loss_scale, 65536.0);
  // Plant an overflow: a layernorm gain of 60000 drives fp16 activations to inf.
  Param* gain = nullptr;
  for (Param* p : trainer.model().params())
    if (p->name == "layers.0.ln1.weight") gain = p;
  ASSERT_NE(gain, nullptr);
  const std::vector<float> huge(static_cast<std::size_t>(gain->value.numel()), 60000.0f);
  g.ops.upload_f32(huge.data(), gain->value);
  const std::vector<float> before = g.download(trainer.model().params().front()->value);
  const IterationRecord second = trainer.step(1);
  EXPECT_TRUE(second.skipped);
  EXPECT_EQ(g.download(trainer.model().params().front()->value), before);  // no update
  EXPECT_DOUBLE_EQ(trainer.step(2).loss_scale, 32768.0);                   // halved after the overflow
}

}  // namespace
}  // namespace ptdp
