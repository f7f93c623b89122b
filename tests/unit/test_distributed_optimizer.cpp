// The distributed optimizer's layout (core/optim/distributed_optimizer.h,
// schedule_buckets' align): buckets are multiples of d and wait for every
// parameter they cut, and the d ranks' owned pieces cover every parameter
// element exactly once, block r of each bucket on rank r.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include "core/kernels/cpu/cpu_ops.h"
#include "core/optim/distributed_optimizer.h"

namespace ptdp {
namespace {

// Buffer order A (5 elements, finished by part 0), B (6, part 1), C (3, part 2);
// the backward visits parts 2, 1, 0. Buffer 14 elements, padded to 16.
std::vector<BucketParam> three_params() { return {{5, {{0, 0}}, false}, {6, {{0, 1}}, false}, {3, {{0, 2}}, false}}; }
const std::vector<BackwardSite> kVisit{{0, 2}, {0, 1}, {0, 0}};

// Buckets of ≥ 5 elements, boundaries rounded up to 4: [0, 8) holds A and the
// first 3 of B (ready once A is, visit 2), [8, 16) the rest of B, C and the
// padding (ready after B, visit 1); launched in readiness order.
TEST(DistributedOptimizer, AlignedBucketsAreMultiplesOfDAndWaitForEveryParameterTheyCut) {
  const std::vector<GradBucket> b = schedule_buckets(three_params(), kVisit, 5, 4);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].offset, 8);
  EXPECT_EQ(b[0].count, 8);
  EXPECT_EQ(b[0].ready_after, 1);
  EXPECT_EQ(b[1].offset, 0);
  EXPECT_EQ(b[1].count, 8);
  EXPECT_EQ(b[1].ready_after, 2);
  EXPECT_THROW(schedule_buckets(three_params(), kVisit, 5, 0), std::invalid_argument);
}

TEST(DistributedOptimizer, OwnedPiecesCoverEveryElementOnceInBlockOrder) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  std::vector<std::unique_ptr<Param>> owned;
  ParamList params;
  for (const BucketParam& bp : three_params()) {
    owned.push_back(std::make_unique<Param>());
    owned.back()->full_shape = {bp.numel};
    owned.back()->value = ops.zeros({bp.numel});
    params.push_back(owned.back().get());
  }
  const std::vector<GradBucket> buckets = schedule_buckets(three_params(), kVisit, 5, 2);  // d = 2
  std::vector<std::vector<int>> hits(3);
  for (std::size_t i = 0; i < 3; ++i) hits[i].assign(static_cast<std::size_t>(params[i]->value.numel()), 0);
  for (int r = 0; r < 2; ++r) {
    std::int64_t next = 0;  // owned pieces are contiguous in the owned buffer, in order
    for (const OwnedPiece& pc : owned_pieces(params, buckets, 2, r)) {
      const auto i = static_cast<std::size_t>(std::find(params.begin(), params.end(), pc.param) - params.begin());
      for (std::int64_t k = 0; k < pc.count; ++k) ++hits[i][static_cast<std::size_t>(pc.param_offset + k)];
      EXPECT_GE(pc.owned_offset, next) << "rank " << r;
      next = pc.owned_offset + pc.count;
    }
    EXPECT_LE(next, 8) << "rank " << r << " owns more than 16 / 2 elements";
  }
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t k = 0; k < hits[i].size(); ++k) EXPECT_EQ(hits[i][k], 1) << "parameter " << i << "[" << k << "]";
  // Buckets [0, 6), [6, 12), [12, 14): rank 1 owns block [3, 6) of the first,
  // A[3, 5) then B[0, 1), at the start of its owned buffer.
  const std::vector<OwnedPiece> r1 = owned_pieces(params, buckets, 2, 1);
  ASSERT_GE(r1.size(), 2u);
  EXPECT_EQ(r1[0].param, params[0]);
  EXPECT_EQ(r1[0].param_offset, 3);
  EXPECT_EQ(r1[0].owned_offset, 0);
  EXPECT_EQ(r1[1].param, params[1]);
  EXPECT_EQ(r1[1].count, 1);
}

}  // namespace
}  // namespace ptdp
