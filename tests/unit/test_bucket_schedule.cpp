// The overlapped data-parallel reduction's plan (core/optim/bucket_schedule.h,
// core/runtime/grad_overlap.h): buckets cover the gradient buffer exactly once,
// never split a parameter, become ready in reverse layer order, wait for every
// place that adds to a gradient (the word embedding used by the head and the
// embedding), defer the tied copy, and follow the chunk order of v > 1 schedules.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "core/comm/single_rank.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/optim/bucket_schedule.h"
#include "core/optim/grad_reduce.h"
#include "core/runtime/grad_overlap.h"
#include "core/schedule/registry.h"

namespace ptdp {
namespace {

constexpr int kHead = ChunkPart::kHead, kEmb = ChunkPart::kEmbedding;

// Every element of [0, total) lies in exactly one bucket, and each bucket starts
// and ends on a parameter boundary.
void expect_exact_cover(const std::vector<GradBucket>& buckets, const std::vector<BucketParam>& params) {
  std::int64_t total = 0;
  std::vector<std::int64_t> bounds{0};
  for (const auto& p : params) bounds.push_back(total += p.numel);
  std::vector<int> hits(static_cast<std::size_t>(total), 0);
  for (const auto& b : buckets) {
    for (std::int64_t i = b.offset; i < b.offset + b.count; ++i) ++hits[static_cast<std::size_t>(i)];
    EXPECT_NE(std::find(bounds.begin(), bounds.end(), b.offset), bounds.end()) << "bucket at " << b.offset;
    EXPECT_NE(std::find(bounds.begin(), bounds.end(), b.offset + b.count), bounds.end()) << "bucket at " << b.offset;
  }
  for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << "element " << i;
}

// One chunk of a p = 1 model: word (head and embedding), position, `layers`
// layers of two parameters, the final layernorm (head); buffer in forward order.
std::vector<BucketParam> single_stage(int layers, bool tied_deferred = false) {
  std::vector<BucketParam> params{{1000, {{0, kHead}, {0, kEmb}}, tied_deferred}, {64, {{0, kEmb}}, false}};
  for (int l = 0; l < layers; ++l) {
    params.push_back({300, {{0, l}}, false});
    params.push_back({20, {{0, l}}, false});
  }
  params.push_back({16, {{0, kHead}}, false});
  return params;
}
std::vector<BackwardSite> single_stage_visit(int layers) {
  std::vector<BackwardSite> visit{{0, kHead}};
  for (int l = layers; l-- > 0;) visit.push_back({0, l});
  visit.push_back({0, kEmb});
  return visit;
}

TEST(BucketSchedule, CoversTheBufferOnceInReverseLayerOrder) {
  const auto params = single_stage(6);
  const auto visit = single_stage_visit(6);
  const auto buckets = schedule_buckets(params, visit, 600);
  expect_exact_cover(buckets, params);
  ASSERT_GE(buckets.size(), 4u);
  for (std::size_t i = 1; i < buckets.size(); ++i) {
    EXPECT_LE(buckets[i - 1].ready_after, buckets[i].ready_after) << "launch order is readiness order";
    EXPECT_GT(buckets[i - 1].offset, buckets[i].offset) << "later layers (later in the buffer) first";
  }
  // A bucket covering layers [a, b] is ready after layer a's backward: visit
  // index 1 + (5 − a); one holding the position embedding after the embedding (7).
  for (const auto& b : buckets) {
    if (b.offset < 1064) {
      EXPECT_EQ(b.ready_after, 7) << "bucket at " << b.offset;
      continue;
    }
    const int first_layer = static_cast<int>((b.offset - 1064) / 320);
    EXPECT_EQ(b.ready_after, 1 + (5 - first_layer)) << "bucket at " << b.offset;
  }
}

TEST(BucketSchedule, WordEmbeddingWaitsForTheEmbeddingBackward) {
  const auto visit = single_stage_visit(2);
  const auto buckets = schedule_buckets(single_stage(2), visit, 10);
  ASSERT_FALSE(buckets.empty());
  EXPECT_EQ(buckets.back().offset, 0);
  EXPECT_EQ(buckets.back().count, 1000) << "a parameter larger than the bucket size is a bucket of its own";
  EXPECT_EQ(buckets.back().ready_after, static_cast<int>(visit.size()) - 1) << "after the embedding, not the head";
  // The final layernorm, last in the buffer, is final right after the head.
  EXPECT_EQ(buckets.front().offset + buckets.front().count, 1000 + 64 + 2 * 320 + 16);
  EXPECT_EQ(buckets.front().ready_after, 0);
}

TEST(BucketSchedule, TiedCopyWaitsForTheEnd) {
  // First stage of p > 1: the word embedding is all-reduced with the last stage's
  // copy by a later instruction, so its bucket goes at the end.
  auto params = single_stage(2, true);
  params[0].sites = {{0, kEmb}};
  params.pop_back();  // no head on the first stage
  std::vector<BackwardSite> visit{{0, 1}, {0, 0}, {0, kEmb}};
  auto buckets = schedule_buckets(params, visit, 100);
  expect_exact_cover(buckets, params);
  EXPECT_EQ(buckets.back().offset, 0);
  EXPECT_EQ(buckets.back().ready_after, 3);
  // Last stage: the tied copy (its own parameter, after the final layernorm) likewise.
  std::vector<BucketParam> last{{300, {{0, 0}}, false}, {16, {{0, kHead}}, false}, {1000, {{0, kHead}}, true}};
  buckets = schedule_buckets(last, {{0, kHead}, {0, 0}}, 10);
  expect_exact_cover(buckets, last);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].offset, 300);  // the final layernorm: ready after the head
  EXPECT_EQ(buckets[0].ready_after, 0);
  EXPECT_EQ(buckets[1].offset, 0);  // layer 0
  EXPECT_EQ(buckets[1].ready_after, 1);
  EXPECT_EQ(buckets[2].offset, 316);  // the tied copy
  EXPECT_EQ(buckets[2].ready_after, 2) << "deferred: after every site";
}

TEST(BucketSchedule, OneLargeBucketIsReadyAtTheLastSite) {
  const auto params = single_stage(3);
  const auto buckets = schedule_buckets(params, single_stage_visit(3), 1'000'000);
  ASSERT_EQ(buckets.size(), 1u);
  EXPECT_EQ(buckets[0].offset, 0);
  EXPECT_EQ(buckets[0].ready_after, 4);
}

TEST(BucketSchedule, RefusesUnvisitedSitesAndBadSizes) {
  const auto params = single_stage(2);
  auto visit = single_stage_visit(2);
  visit.pop_back();  // the embedding is never visited
  EXPECT_THROW(schedule_buckets(params, visit, 100), std::invalid_argument);
  EXPECT_THROW(schedule_buckets(params, single_stage_visit(2), 0), std::invalid_argument);
  EXPECT_THROW(schedule_buckets({{10, {}, false}}, single_stage_visit(2), 100), std::invalid_argument);
}

// Interleaved 1F1B, p = 2, v = 2: the last micro-batch's backward runs chunk 1
// (later layers) before chunk 0, on every rank.
TEST(BucketSchedule, InterleavedLastBackwardsVisitLaterChunksFirst) {
  for (int rank = 0; rank < 2; ++rank) {
    const LastBackwards last = last_backwards(build_program("interleaved", {2, 4, 2, rank}), 2);
    EXPECT_EQ(last.mb, (std::vector<int>{3, 3})) << "rank " << rank;
    EXPECT_EQ(last.chunk_order, (std::vector<int>{1, 0})) << "rank " << rank;
  }
  const LastBackwards one = last_backwards(build_program("1f1b", {1, 4, 1, 0}), 1);
  EXPECT_EQ(one.mb, (std::vector<int>{3}));
  EXPECT_EQ(one.chunk_order, (std::vector<int>{0}));
}

// v = 2 chunks of one rank, chunk 0 before chunk 1 in the buffer, chunk 1's
// backward first: chunk 1's buckets are all launched before chunk 0's.
TEST(BucketSchedule, LaterChunkBucketsFirstWithTwoChunks) {
  std::vector<BucketParam> params;
  for (int c = 0; c < 2; ++c)
    for (int l = 0; l < 2; ++l) params.push_back({100, {{c, l}}, false});
  const std::vector<BackwardSite> visit{{1, 1}, {1, 0}, {0, 1}, {0, 0}};
  const auto buckets = schedule_buckets(params, visit, 100);
  expect_exact_cover(buckets, params);
  ASSERT_EQ(buckets.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(buckets[static_cast<std::size_t>(i)].offset, 100 * (3 - i));
    EXPECT_EQ(buckets[static_cast<std::size_t>(i)].ready_after, i);
  }
}

// The real model's sites: p = 1, v = 2 (embedding on chunk 0, head on chunk 1,
// the word embedding shared): every parameter's sites are visited and the word
// embedding's bucket waits for chunk 0's embedding, the very last site.
TEST(BucketSchedule, RankModelSitesWithTwoChunks) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  SingleRankCommunicator tp;
  Model model{4, 32, 4, 8, 64, 128};
  Plan plan;
  plan.virtual_stages = 2;
  ModelContext ctx{ops, tp, model, plan};
  RankModel rank_model(ctx, 0);
  const LastBackwards last = last_backwards(build_program("interleaved", {1, 2, 2, 0}), 2);
  const auto visit = backward_visit(rank_model, last);
  ASSERT_EQ(visit.front(), (BackwardSite{1, kHead}));
  ASSERT_EQ(visit.back(), (BackwardSite{0, kEmb}));
  const auto params = bucket_params(rank_model);
  ASSERT_EQ(params.size(), rank_model.params().size());
  EXPECT_EQ(params[0].sites.size(), 2u) << "the word embedding: chunk 0's embedding and chunk 1's head";
  const auto buckets = schedule_buckets(params, visit, 1);
  expect_exact_cover(buckets, params);
  EXPECT_EQ(buckets.back().offset, 0);
  EXPECT_EQ(buckets.back().ready_after, static_cast<int>(visit.size()) - 1);
}

// A data-parallel group of two that only notes which elements each overlapped
// all-reduce covers (offsets into `base`).
class NotingGroup final : public Communicator {
 public:
  explicit NotingGroup(const float* base) : base_(base) {}
  std::vector<std::pair<std::int64_t, std::int64_t>> launched;
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string backend() const override { return "noting"; }
  std::unique_ptr<Request> all_reduce_overlapped(void* buf, std::int64_t count, DType, ReduceOp) override {
    launched.emplace_back(static_cast<const float*>(buf) - base_, count);
    return std::make_unique<CompletedRequest>();
  }
  void all_reduce(void*, std::int64_t, DType, ReduceOp) override { ADD_FAILURE() << "blocking all_reduce"; }
  void all_gather(const void*, void*, std::int64_t, DType) override {}
  void reduce_scatter(const void*, void*, std::int64_t, DType, ReduceOp) override {}
  void broadcast(void*, std::int64_t, DType, int) override {}
  double all_reduce_host(double v, ReduceOp) override { return v; }
  std::unique_ptr<Request> isend(const void*, std::int64_t, DType, int, int) override { return nullptr; }
  std::unique_ptr<Request> irecv(void*, std::int64_t, DType, int, int) override { return nullptr; }
  void barrier() override {}
  std::unique_ptr<Communicator> split(int, int) override { return nullptr; }
  [[noreturn]] void abort(const std::string& why) override { throw std::runtime_error(why); }

 private:
  const float* base_;
};

// Buckets go out as their last site is visited, the rest at finish(), each once.
TEST(BucketedGradReduce, LaunchesEachBucketOnceWhenReady) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  const auto params = single_stage(4);
  const auto visit = single_stage_visit(4);
  const auto buckets = schedule_buckets(params, visit, 300);
  std::int64_t total = 0;
  for (const auto& p : params) total += p.numel;
  Tensor grads = ops.zeros({total}, DType::f32);
  NotingGroup dp(grads.data<float>());
  BucketedGradReduce reduce(grads, dp, buckets);
  for (int iteration = 0; iteration < 2; ++iteration) {
    dp.launched.clear();
    reduce.begin_iteration();
    std::size_t expected = 0;
    for (int k = 0; k + 1 < static_cast<int>(visit.size()); ++k) {  // all but the embedding
      reduce.visited(k);
      while (expected < buckets.size() && buckets[expected].ready_after <= k) ++expected;
      ASSERT_EQ(dp.launched.size(), expected) << "after visit " << k;
    }
    EXPECT_LT(dp.launched.size(), buckets.size()) << "the word embedding's bucket waits for the embedding";
    EXPECT_EQ(reduce.finish(), static_cast<int>(buckets.size()));
    std::int64_t covered = 0;
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      EXPECT_EQ(dp.launched[i].first, buckets[i].offset);
      covered += dp.launched[i].second;
    }
    EXPECT_EQ(covered, total);
  }
  EXPECT_THROW(BucketedGradReduce(grads, dp, {{0, total - 1, 0}}), std::invalid_argument);
}

}  // namespace
}  // namespace ptdp
