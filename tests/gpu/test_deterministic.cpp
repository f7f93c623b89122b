// plan.deterministic end to end: a small GPT (2 layers, h 128, 4 heads, s 64,
// V 256) trained for 3 iterations twice from the same seed, each run with a
// fresh allocator, CudaOps and Trainer, must give bitwise-identical losses,
// gradient norms, final weights and last gradients (every parameter's bytes).
//
// Why this can fail: tokens repeat heavily within a micro-batch (b·s = 16·64 =
// 1024 tokens over V = 256, and the synthetic stream follows a fixed
// permutation 80% of the time), so the atomic embedding backward adds several
// fp32 rows into the same gradient row in whatever order the blocks arrive;
// fp32 addition is not associative, so the order shows in the last bits of
// dwte, then in the gradient norm, the clip factor and every weight. The same
// holds for cuDNN's non-deterministic dQ accumulation, a floating-point atomic
// left in a bias or layernorm column reduction, or a timed (run-dependent)
// cuBLASLt algorithm choice. The last gradients are compared in fp32, before
// rounding to the 16-bit weights could hide a difference in the last bits.
// Skipped without a GPU.
#include <cstring>
#include <vector>

#include "core/comm/nccl_communicator.h"
#include "core/comm/process_groups.h"
#include "core/comm/single_rank.h"
#include "core/data/token_source.h"
#include "core/kernels/cuda/cuda_ops.h"
#include "core/runtime/backend.h"
#include "core/runtime/trainer.h"
#include "tests/gpu/cuda_ops_harness.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

Config small_gpt(Precision precision) {
  Config c;
  c.model = {2, 128, 4, 64, 256, 0, 0};
  c.plan.micro_batch = 16;  // 1024 tokens per micro-batch over 256 token ids
  c.plan.global_batch = 32;  // 2 micro-batches: gradients accumulate too
  c.plan.precision = precision;
  c.plan.attention = attention_unavailable(Device::cuda, Attention::flash, c.model.head_dim()).empty() ? Attention::flash
                                                                                                   : Attention::unfused;
  c.plan.deterministic = true;
  c.optimizer.lr = 3e-3;
  return c;
}

// What one run leaves behind: every iteration's loss and gradient norm, and
// the raw bytes of every parameter's value (compute type) and last gradient (fp32).
struct RunResult {
  std::vector<double> losses, grad_norms;
  std::vector<std::vector<unsigned char>> values, grads;
  std::vector<std::string> names;
};

std::vector<unsigned char> device_bytes(const Tensor& t) {
  std::vector<unsigned char> host(static_cast<std::size_t>(t.bytes()));
  EXPECT_EQ(cudaMemcpy(host.data(), t.raw(), host.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

RunResult train_once(const Config& cfg, int iterations) {
  gputest::CudaOpsHarness g(cuda_ops_options(cfg.plan, 60));
  auto world = NcclCommunicator::create_world(std::make_unique<SingleRankCommunicator>(), g.ops.stream(), 60);
  ProcessGroups groups = make_process_groups(*world, {1, 1, 1, 1});
  auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  Trainer trainer(cfg, g.ops, groups, *data);
  RunResult r;
  for (int i = 0; i < iterations; ++i) {
    const IterationRecord rec = trainer.step(i);
    r.losses.push_back(rec.loss);
    r.grad_norms.push_back(rec.grad_norm);
  }
  g.ops.synchronize();
  for (Param* p : trainer.model().params()) {
    r.names.push_back(p->name);
    r.values.push_back(device_bytes(p->value));
    r.grads.push_back(device_bytes(p->grad));
  }
  return r;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_bitwise_repeatable(Precision precision) {
  const Config cfg = small_gpt(precision);
  const std::string what = to_string(precision) + ", " + to_string(cfg.plan.attention) + " attention";
  const RunResult a = train_once(cfg, 3), b = train_once(cfg, 3);
  ASSERT_EQ(a.losses.size(), b.losses.size());
  for (std::size_t i = 0; i < a.losses.size(); ++i) {
    EXPECT_TRUE(same_bits(a.losses[i], b.losses[i]))
        << what << ": loss of iteration " << i << ": " << a.losses[i] << " vs " << b.losses[i];
    EXPECT_TRUE(same_bits(a.grad_norms[i], b.grad_norms[i]))
        << what << ": gradient norm of iteration " << i << ": " << a.grad_norms[i] << " vs " << b.grad_norms[i];
  }
  ASSERT_EQ(a.names, b.names);
  ASSERT_FALSE(a.names.empty());
  for (std::size_t k = 0; k < a.names.size(); ++k) {
    EXPECT_TRUE(a.values[k] == b.values[k]) << what << ": weights of " << a.names[k] << " differ";
    EXPECT_TRUE(a.grads[k] == b.grads[k]) << what << ": last gradient of " << a.names[k] << " differs";
  }
}

TEST(Deterministic, Bf16TrainingRepeatsBitForBit) {
  PTDP_REQUIRE_GPU();
  expect_bitwise_repeatable(Precision::bf16);
}

TEST(Deterministic, Fp16TrainingRepeatsBitForBit) {
  PTDP_REQUIRE_GPU();
  expect_bitwise_repeatable(Precision::fp16);
}

}  // namespace
}  // namespace ptdp
