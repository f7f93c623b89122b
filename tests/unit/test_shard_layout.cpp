// ZeRO-2/3's units (core/optim/shard_layout.h) and their residency
// (core/optim/sharded_parts.h) on one rank: which parameters move together,
// where each unit lies padded to d, which part ends each unit's gradients, the
// pass order prefetch follows; gradients bound only inside a part's backward
// and summed into the owned block, weights (ZeRO-3) held only inside a part.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "core/comm/single_rank.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/optim/distributed_optimizer.h"
#include "core/optim/sharded_parts.h"

namespace ptdp {
namespace {

// One chunk: embedding {word 10, wpe 7}, layers 0 {b 5, c 3} and 1 {a 6}, head
// {lnf 4, word} (the tied word used by two parts), in backward order.
struct Toy {
  CpuAllocator alloc;
  CpuOps ops{alloc};
  std::vector<std::unique_ptr<Param>> owned;
  Param *word, *wpe, *b, *c, *a, *lnf;
  Toy() {
    word = make("word", 10), wpe = make("wpe", 7), b = make("b", 5), c = make("c", 3), a = make("a", 6);
    lnf = make("lnf", 4);
  }
  Param* make(const char* name, std::int64_t n) {
    owned.push_back(make_param(ops, name, {n}, {}, Init::normal, 0.02f, 1, false));
    return owned.back().get();
  }
  std::vector<std::vector<ChunkPart>> chunks() const {
    return {{{ChunkPart::kHead, {lnf, word}}, {1, {a}}, {0, {b, c}}, {ChunkPart::kEmbedding, {word, wpe}}}};
  }
};

// Forward order, the shared word first: {word} [0, 12), {wpe} [12, 20), {b, c}
// [20, 28), {a} [28, 36), {lnf} [36, 40) at d = 4.
TEST(ShardLayout, UnitsPerPartPaddedToDWithSharedParametersApart) {
  Toy t;
  const ShardLayout l = shard_layout(t.chunks(), nullptr, 4);
  ASSERT_EQ(l.units.size(), 5u);
  const std::vector<std::int64_t> offsets{0, 12, 20, 28, 36}, counts{12, 8, 8, 8, 4};
  for (std::size_t u = 0; u < 5; ++u) {
    EXPECT_EQ(l.units[u].offset, offsets[u]) << "unit " << u;
    EXPECT_EQ(l.units[u].count, counts[u]) << "unit " << u;
  }
  EXPECT_EQ(l.size, 40);
  EXPECT_EQ(l.units[2].params, (ParamList{t.b, t.c}));
  EXPECT_EQ(l.units[2].at, (std::vector<std::int64_t>{0, 5}));
  // The head adds to the word, but the embedding's backward does later: only it flushes the word.
  EXPECT_EQ(l.part(0, ChunkPart::kHead).units, (std::vector<int>{4, 0}));
  EXPECT_EQ(l.part(0, ChunkPart::kHead).flush, (std::vector<int>{4}));
  EXPECT_EQ(l.part(0, ChunkPart::kEmbedding).flush, (std::vector<int>{0, 1}));
  EXPECT_THROW(l.part(0, 7), std::logic_error);
  EXPECT_THROW(shard_layout(t.chunks(), nullptr, 0), std::invalid_argument);
}

TEST(ShardLayout, NextPartFollowsEachPassAndOwnedPiecesCoverEveryElementOnce) {
  Toy t;
  const ShardLayout l = shard_layout(t.chunks(), nullptr, 4);
  EXPECT_EQ(l.next_part(0, ChunkPart::kEmbedding, true), 0);
  EXPECT_EQ(l.next_part(0, 1, true), ChunkPart::kHead);
  EXPECT_EQ(l.next_part(0, ChunkPart::kHead, true), ShardLayout::kNoPart);
  EXPECT_EQ(l.next_part(0, ChunkPart::kHead, false), 1);
  EXPECT_EQ(l.next_part(0, ChunkPart::kEmbedding, false), ShardLayout::kNoPart);
  std::int64_t covered = 0;
  for (int r = 0; r < 4; ++r)
    for (const OwnedPiece& pc : l.owned_pieces(r)) {
      EXPECT_LT(pc.owned_offset + pc.count, l.size / 4 + 1) << "rank " << r;
      covered += pc.count;
    }
  EXPECT_EQ(covered, 35);  // every element once, padding nowhere
  // Rank 1 owns word[3, 6) first: block 1 of unit [0, 12).
  const OwnedPiece first = l.owned_pieces(1).front();
  EXPECT_EQ(first.param, t.word);
  EXPECT_EQ(first.param_offset, 3);
  EXPECT_EQ(first.count, 3);
}

// The last stage's tied copy is used by one part but summed with the first
// stage: a unit of its own, so both stages own the same rows of it.
TEST(ShardLayout, TheTiedCopyIsAUnitOfItsOwn) {
  Toy t;
  const std::vector<std::vector<ChunkPart>> last{{{ChunkPart::kHead, {t.lnf, t.word}}, {0, {t.a}}}};
  const ShardLayout l = shard_layout(last, t.word, 2);
  EXPECT_EQ(l.units[static_cast<std::size_t>(l.unit_of.at(t.word))].params, ParamList{t.word});
  EXPECT_EQ(l.units.size(), 3u);
}

TEST(ShardedParts, GradientsLiveOnlyInsideABackwardAndSumIntoTheOwnedBlock) {
  Toy t;
  SingleRankCommunicator one;
  ShardedParts parts(t.ops, shard_layout(t.chunks(), nullptr, 1), one, false);
  parts.begin_iteration();
  for (int mb = 0; mb < 2; ++mb) {  // two micro-batches add 1 each to a's gradients
    EXPECT_FALSE(t.a->grad.defined());
    parts.enter(0, 1, PartPass::backward);
    ASSERT_TRUE(t.a->grad.defined());
    Tensor ones = t.ops.empty({6});
    for (std::int64_t i = 0; i < 6; ++i) ones.data<float>()[i] = 1;
    t.ops.add(t.a->grad, ones, t.a->grad);
    parts.leave(0, 1, PartPass::backward);
    EXPECT_FALSE(t.a->grad.defined()) << "released when the part leaves";
  }
  EXPECT_THROW(parts.begin_iteration(), std::logic_error);  // flushes outstanding
  parts.finish_gradients();
  const ShardUnit& u = parts.layout().units[static_cast<std::size_t>(parts.layout().unit_of.at(t.a))];
  const float* owned = parts.owned_grads().data<float>() + u.offset;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(owned[i], 2.0f) << i;
  EXPECT_THROW(ShardedParts(t.ops, shard_layout(t.chunks(), nullptr, 2), one, false), std::invalid_argument);
}

TEST(ShardedParts, WeightsAreHeldOnlyInsideAPartAndKeepTheirValues) {
  Toy t;
  const float first = t.b->value.data<float>()[0];
  SingleRankCommunicator one;
  ShardedParts parts(t.ops, shard_layout(t.chunks(), nullptr, 1), one, true);
  EXPECT_FALSE(t.b->value.defined()) << "only the owned block stays";
  parts.enter(0, 0, PartPass::forward);
  ASSERT_TRUE(t.b->value.defined());
  EXPECT_EQ(t.b->value.data<float>()[0], first);
  EXPECT_FALSE(t.b->grad.defined()) << "a forward binds no gradients";
  parts.leave(0, 0, PartPass::forward);
  EXPECT_FALSE(t.b->value.defined());
  parts.enter(0, ChunkPart::kEmbedding, PartPass::backward);
  EXPECT_FALSE(t.wpe->value.defined()) << "the embedding's backward needs no weights";
  parts.leave(0, ChunkPart::kEmbedding, PartPass::backward);
  parts.finish_gradients();
  parts.materialize();
  EXPECT_EQ(t.b->value.data<float>()[0], first);
  // The optimizer's owned buffers must be 1/d of the layout.
  EXPECT_THROW(DistributedOptimizer(t.ops, parts.layout(), t.ops.zeros({3}), Tensor{}, one, OptimizerConfig{}),
               std::invalid_argument);
}

}  // namespace
}  // namespace ptdp
