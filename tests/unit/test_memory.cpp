// Allocator accounting and the memory model against what the model really holds.
#include <gtest/gtest.h>

#include "core/accounting/memory_model.h"
#include "core/comm/single_rank.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/model/rank_model.h"
#include "core/schedule/registry.h"

namespace ptdp {
namespace {

TEST(Allocator, TracksLiveAndPeakBytes) {
  CpuAllocator alloc;
  {
    Tensor a(alloc, {10, 10}, DType::f32);
    Tensor b(alloc, {5}, DType::i32);
    EXPECT_EQ(alloc.stats().live_bytes, 420);
    Tensor view = a.rows(2, 3);  // a view allocates nothing
    EXPECT_EQ(alloc.stats().live_bytes, 420);
  }
  EXPECT_EQ(alloc.stats().live_bytes, 0);
  EXPECT_EQ(alloc.stats().peak_bytes, 420);
  alloc.reset_peak();
  EXPECT_EQ(alloc.stats().peak_bytes, 0);
}

TEST(Allocator, OutOfMemoryNamesRankRequestAndPeak) {
  CpuAllocator alloc(3, 1000);
  Tensor a(alloc, {200}, DType::f32);
  try {
    Tensor b(alloc, {100}, DType::f32);
    FAIL() << "allocation beyond the limit succeeded";
  } catch (const OutOfMemory& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rank 3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("400 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("peak 800"), std::string::npos) << msg;
  }
}

// Freed blocks come back for the same size (training repeats its sizes every
// micro-batch) and never pile up beyond what was live: a size the cache cannot
// serve while it holds more than is live empties it. A sanitizer build frees
// at once instead (so ASan sees a use after free).
TEST(Allocator, ReusesAFreedBlockOfTheSameSizeAndBoundsItsCache) {
  if (!CpuAllocator::caches_blocks()) GTEST_SKIP() << "AddressSanitizer build: the allocator frees at once";
  CpuAllocator alloc;
  void* first = alloc.allocate(1000);
  alloc.deallocate(first, 1000);
  EXPECT_EQ(alloc.cached_bytes(), 1024);  // 64-byte multiples
  EXPECT_EQ(alloc.stats().live_bytes, 0);
  void* again = alloc.allocate(1000);
  EXPECT_EQ(again, first);
  EXPECT_EQ(alloc.cached_bytes(), 0);
  EXPECT_EQ(alloc.stats().live_bytes, 1000);
  EXPECT_EQ(alloc.stats().allocations, 2);
  alloc.deallocate(again, 1000);
  void* other = alloc.allocate(64);  // cache 1024 > live 0: emptied before a fresh block
  EXPECT_EQ(alloc.cached_bytes(), 0);
  void* kept = alloc.allocate(4096);
  alloc.deallocate(other, 64);  // cache 64 < live 4096: a miss keeps it
  void* miss = alloc.allocate(128);
  EXPECT_EQ(alloc.cached_bytes(), 64);
  alloc.deallocate(miss, 128);
  alloc.deallocate(kept, 4096);
}

TEST(Tensor, RowsAndViewsShareStorage) {
  CpuAllocator alloc;
  Tensor a(alloc, {4, 3}, DType::f32);
  for (int i = 0; i < 12; ++i) a.data<float>()[i] = static_cast<float>(i);
  Tensor r = a.rows(1, 2);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(r.data<float>()[0], 3.0f);
  EXPECT_EQ(r.view({6}).data<float>()[5], 8.0f);
  EXPECT_THROW(a.rows(3, 2), std::out_of_range);
  EXPECT_THROW(a.view({5}), std::logic_error);
  EXPECT_THROW(a.data<std::int32_t>(), std::logic_error);
}

struct Built {
  Model model{4, 64, 4, 16, 128, 0};
  Plan plan;
  CpuAllocator alloc;
  CpuOps ops{alloc};
  SingleRankCommunicator tp;
};

TEST(MemoryModel, ParameterCountIsWhatTheModelHolds) {
  Built b;
  b.plan.precision = Precision::fp32;
  ModelContext ctx{b.ops, b.tp, b.model, b.plan};
  RankModel model(ctx, 0);
  const RankDims r(b.model, b.plan);
  EXPECT_EQ(model.num_parameters(), rank_parameter_count(b.model, b.plan, r, 0));
  const MemoryTraits tr = memory_traits(Device::cpu, Precision::fp32, false);
  const auto m = memory_model(b.model, b.plan, r, tr, ActivationFormula::ptdp, 0, build_program("1f1b", {1, 4, 1, 0}));
  EXPECT_EQ(m.params, model.num_parameters() * 4);
  EXPECT_EQ(m.grads, m.params);
  EXPECT_EQ(m.optimizer, 2 * m.params);
  // Built parameters and gradients are all the allocator holds now.
  EXPECT_EQ(b.alloc.stats().live_bytes, m.params + m.grads);
}

TEST(MemoryModel, GpipeKeepsEveryMicroBatchAnd1F1BOne) {
  Model model{4, 64, 4, 16, 128, 0};
  Plan plan;
  plan.global_batch = 8;
  plan.micro_batch = 2;
  const MemoryTraits tr = memory_traits(Device::cpu, Precision::fp32, false);
  const RankDims r(model, plan);
  const auto gpipe = memory_model(model, plan, r, tr, ActivationFormula::ptdp, 0, build_program("gpipe", {1, 4, 1, 0}));
  const auto one = memory_model(model, plan, r, tr, ActivationFormula::ptdp, 0, build_program("1f1b", {1, 4, 1, 0}));
  const std::int64_t per_mb = 4 * layer_activation_bytes(model, plan, r, tr) + head_activation_bytes(model, r, tr);
  EXPECT_EQ(one.activations, per_mb);
  EXPECT_EQ(gpipe.activations, 4 * per_mb);
}

TEST(MemoryModel, LayerActivationsByHand) {
  Model model{1, 64, 4, 16, 128, 0};  // h = 64, f = 256, a = 4, s = 16
  Plan plan;
  plan.micro_batch = 2;  // n = 32 tokens
  const MemoryTraits tr = memory_traits(Device::cpu, Precision::fp32, false);
  // x, ln1, x2, ln2: 4·64; qkv 192; attention out 64; fc1, GeLU 2·256 → 1024 floats, + 4 statistics.
  const std::int64_t kept = 32 * ((4 * 64 + 192 + 64 + 512) * 4 + 16);
  const RankDims r(model, plan);  // the recompute mode changes no size
  EXPECT_EQ(layer_activation_bytes(model, plan, r, tr), kept + 32 * 4 * 16 * 4);  // + probs (a, s) per token
  plan.recompute = Recompute::selective;
  EXPECT_EQ(layer_activation_bytes(model, plan, r, tr), kept);
  plan.recompute = Recompute::full;
  EXPECT_EQ(layer_activation_bytes(model, plan, r, tr), 32 * 64 * 4);
  plan.tp = 2;
  EXPECT_EQ(rank_parameter_count(model, plan, RankDims(model, plan), 0),
            (3 * 64 * 64 + 3 * 64 + 64 * 64 + 2 * 64 * 256 + 256) / 2 + 6 * 64 + 64 * 64 + 16 * 64 + 2 * 64);
}

}  // namespace
}  // namespace ptdp
