// The rings of tensor-parallel communication overlap (core/model/tp_overlap.h),
// through the dispatch the layers call (core/model/token_split.h), on t = 3
// in-process ranks: the same gathered tensor and reduced rows as the plain
// collectives, the GEMM called once per rank block in ring order, and the
// group's point-to-point used in place of the collectives. Values are small
// integers, so every sum is exact in fp32.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "core/comm/in_process_communicator.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/model/token_split.h"
#include "tests/pipeline_pair_util.h"

namespace ptdp {
namespace {

constexpr int kT = 3;
constexpr std::int64_t kRows = 2, kWidth = 5;  // per rank: local (1, 2, 5); full (1, 6, 5)
constexpr double kTimeoutS = 60;

float gathered_value(std::int64_t row, std::int64_t col) { return static_cast<float>(100 * row + col); }
// Rank r's partial product at a full row; the sum over ranks is (1+2+3)× the base.
float partial_value(int r, std::int64_t row, std::int64_t col) { return static_cast<float>((r + 1) * (10 * row + col)); }

struct RankRun {
  std::vector<std::pair<std::int64_t, std::int64_t>> gather_calls, reduce_calls;  // (first row, rows)
  std::vector<float> full, reduced;
  std::int64_t comm_calls = 0;
};

RankRun run_rank(int r, Communicator& tp, bool overlap) {
  CpuAllocator alloc(r);
  CpuOps ops(alloc);
  Model model;
  Plan plan;
  plan.tp = kT;
  plan.sequence_parallel = true;
  plan.tp_comm_overlap = overlap;
  ModelContext ctx{ops, tp, model, plan};
  RankRun out;
  Tensor local = ops.empty({1, kRows, kWidth}, DType::f32);
  for (std::int64_t i = 0; i < kRows; ++i)
    for (std::int64_t c = 0; c < kWidth; ++c) local.data<float>()[i * kWidth + c] = gathered_value(r * kRows + i, c);
  Tensor full = gathered_tokens(ctx, local);
  gather_tokens_then(ctx, local, full, [&](std::int64_t row, std::int64_t n) {
    out.gather_calls.push_back({row, n});
    const Tensor block = token_rows(full, row, n);  // must be complete when the GEMM is called
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < kWidth; ++c)
        EXPECT_EQ(block.data<float>()[i * kWidth + c], gathered_value(row + i, c)) << "rank " << r << " row " << row + i;
  });
  const Tensor reduced = reduce_tokens_of(ctx, {1, kT * kRows, kWidth}, [&](std::int64_t row, std::int64_t n, Tensor& o) {
    out.reduce_calls.push_back({row, n});
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < kWidth; ++c) o.data<float>()[i * kWidth + c] = partial_value(r, row + i, c);
  });
  EXPECT_EQ(reduced.shape(), (Shape{1, kRows, kWidth}));
  out.full.assign(full.data<float>(), full.data<float>() + full.numel());
  out.reduced.assign(reduced.data<float>(), reduced.data<float>() + reduced.numel());
  out.comm_calls = tp.stats().calls;
  return out;
}

std::vector<RankRun> run_all(bool overlap) {
  auto world = make_in_process_world(kT, kTimeoutS);
  std::vector<RankRun> runs(kT);
  test::run_rank_threads(world, [&](int r, Communicator& tp) {
    runs[static_cast<std::size_t>(r)] = run_rank(r, tp, overlap);
    return std::vector<double>{};
  });
  return runs;
}

void expect_values(const std::vector<RankRun>& runs) {
  for (int r = 0; r < kT; ++r) {
    const RankRun& run = runs[static_cast<std::size_t>(r)];
    for (std::int64_t row = 0; row < kT * kRows; ++row)
      for (std::int64_t c = 0; c < kWidth; ++c)
        EXPECT_EQ(run.full[static_cast<std::size_t>(row * kWidth + c)], gathered_value(row, c)) << "rank " << r;
    for (std::int64_t i = 0; i < kRows; ++i)
      for (std::int64_t c = 0; c < kWidth; ++c)
        EXPECT_EQ(run.reduced[static_cast<std::size_t>(i * kWidth + c)], 6 * (10 * (r * kRows + i) + c)) << "rank " << r;
  }
}

TEST(TpOverlap, RingsGiveTheCollectivesValuesBlockByBlock) {
  const std::vector<RankRun> runs = run_all(true);
  expect_values(runs);
  for (int r = 0; r < kT; ++r) {
    const RankRun& run = runs[static_cast<std::size_t>(r)];
    // Gather: own block first, then each previous rank's as it arrives.
    // Reduce: block r−1 first (its sum starts here), own block last (its sum ends here).
    std::vector<std::pair<std::int64_t, std::int64_t>> gather, reduce;
    for (int k = 0; k < kT; ++k) {
      gather.push_back({((r - k + kT) % kT) * kRows, kRows});
      reduce.push_back({((r - 1 - k + 2 * kT) % kT) * kRows, kRows});
    }
    EXPECT_EQ(run.gather_calls, gather) << "rank " << r;
    EXPECT_EQ(run.reduce_calls, reduce) << "rank " << r;
    EXPECT_EQ(run.comm_calls, 2 * (kT - 1)) << "rank " << r << ": t−1 sends a ring, no collective";
  }
}

TEST(TpOverlap, WithoutOverlapOneGemmAfterOneCollective) {
  const std::vector<RankRun> runs = run_all(false);
  expect_values(runs);
  for (const RankRun& run : runs) {
    const std::vector<std::pair<std::int64_t, std::int64_t>> all{{0, kT * kRows}};
    EXPECT_EQ(run.gather_calls, all);
    EXPECT_EQ(run.reduce_calls, all);
    EXPECT_EQ(run.comm_calls, 2);  // one all-gather, one reduce-scatter
  }
}

}  // namespace
}  // namespace ptdp
