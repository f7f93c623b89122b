// The CUDA backend as the model uses it: cuBLASLt linear layers and the unfused
// attention path against the CPU reference, fused and unfused variants in
// agreement, a small GPT trained on one GPU against the CPU backend, and fp16
// loss scaling skipping a step on an overflow. Skipped without a GPU.
#include <cmath>

#include "core/comm/nccl_communicator.h"
#include "core/comm/process_groups.h"
#include "core/comm/single_rank.h"
#include "core/data/token_source.h"
#include "core/kernels/cpu/attention.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/kernels/cpu/linear.h"
#include "core/kernels/cuda/cuda_ops.h"
#include "core/runtime/trainer.h"
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

// qkv (b, s, a, 3d) through the backend's attention, forward and backward.
struct AttentionRun {
  std::vector<float> out, dqkv;
};

AttentionRun run_attention(Gpu& g, const std::vector<float>& qkv, const std::vector<float>& dout, std::int64_t b,
                           std::int64_t s, int a, std::int64_t d) {
  Tensor tq = g.upload(qkv, {b, s, 3 * a * d}, DType::bf16), tdo = g.upload(dout, {b, s, a * d}, DType::bf16);
  Tensor out = g.ops.empty({b, s, a * d}), dq = g.ops.empty({b, s, 3 * a * d});
  Tensor saved = g.ops.attention_forward(tq, a, out);
  g.ops.attention_backward(tdo, tq, out, saved, a, dq);
  return {g.download(out), g.download(dq)};
}

TEST(CudaOps, FusedAndUnfusedAttentionMatchTheCpuAndEachOther) {
  PTDP_REQUIRE_GPU();
  const std::int64_t b = 2, s = 45, d = 32;
  const int a = 3;
  std::mt19937 rng(5);
  const auto qkv = gputest::random_values<__nv_bfloat16>(rng, b * s * 3 * a * d);
  const auto dout = gputest::random_values<__nv_bfloat16>(rng, b * s * a * d);
  std::vector<float> out(dout.size()), probs(static_cast<std::size_t>(b * a * s * s)), dqkv(qkv.size());
  cpu::attention_forward(qkv.data(), b, s, a, d, out.data(), probs.data());
  cpu::attention_backward(dout.data(), qkv.data(), probs.data(), b, s, a, d, dqkv.data());
  for (Attention kind : {Attention::flash, Attention::unfused})
    for (bool fused : {true, false}) {
      Gpu g(DType::bf16, fused, kind);
      const AttentionRun r = run_attention(g, qkv, dout, b, s, a, d);
      const std::string what = std::string(kind == Attention::flash ? "flash" : "unfused") + (fused ? "" : ", unfused ops");
      // Unfused rounds the probabilities to bf16 before P·V: one more rounding of a length-s reduction.
      expect_close<__nv_bfloat16>(r.out, out, gputest::reduction<__nv_bfloat16>(2.0 * s), what + ": out");
      expect_close<__nv_bfloat16>(r.dqkv, dqkv, gputest::reduction<__nv_bfloat16>(4.0 * s), what + ": dqkv");
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
