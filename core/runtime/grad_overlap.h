// Glue between a rank's program, its model and the bucketed data-parallel
// reduction: which backward instruction of each chunk is its last (when its
// gradients become final), the order those backwards visit the chunks' parts,
// and each parameter's places in that order.
#pragma once
#include <vector>

#include "core/model/rank_model.h"
#include "core/optim/bucket_schedule.h"
#include "core/schedule/instruction.h"

namespace ptdp {

// Per chunk (0..chunks-1), the micro-batch of its last backward in `program`
// (-1 when it has none), and the chunks in the order those last backwards run.
struct LastBackwards {
  std::vector<int> mb;
  std::vector<int> chunk_order;
};
LastBackwards last_backwards(const Program& program, int chunks);

// The sites the last backwards complete, in order: for each chunk of
// chunk_order, its parts in ModelChunk::backward_parts() order.
std::vector<BackwardSite> backward_visit(RankModel& model, const LastBackwards& last);

// The parameters of model.params() (gradient-buffer order) with every site that
// adds to their gradient; the tied word copy (all-reduced over the embedding
// group by a later instruction) is deferred to the end.
std::vector<BucketParam> bucket_params(RankModel& model);

// The bucketed reduction of `program` on `model`: when gradients become final,
// the visit order, and the buckets of its gradient buffer in launch order, each
// a multiple of `align` elements (the distributed optimizer's d).
struct ReductionPlan {
  LastBackwards last;
  std::vector<BackwardSite> visit;
  std::vector<GradBucket> buckets;
};
ReductionPlan plan_reduction(RankModel& model, const Program& program, std::int64_t align);

}  // namespace ptdp
