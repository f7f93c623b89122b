// The runtime's overlapped data-parallel gradient reduction (plan
// overlap_grad_reduce; core/runtime/grad_overlap.h, core/optim/grad_reduce.h)
// as the simulator charges it. The rank's gradient buffer is cut into the
// runtime's buckets (schedule_buckets, bucket_elements_for, align d under the
// distributed optimizer); a bucket is final once the last backward of every
// chunk it holds gradients of has passed them, and is then reduced (all-reduce,
// or reduce-scatter under the distributed optimizer) on the rank's one
// communication channel, one bucket after another in the order they become
// final, beside the compute (no contention modelled). Buckets holding the tied
// word embedding wait for reduce_grads (its all-reduce over the embedding group
// comes first). reduce_grads ends when the channel has drained.
//
// Approximations: parameters are taken a layer (or the embedding's position
// table, or the head's layernorm) at a time, not tensor by tensor, so bucket
// boundaries fall on layer boundaries; within a chunk's last backward each
// part is final at its share of the backward's modelled time (head first, then
// the layers from the last, then the embedding), scaled onto the span the
// simulator gave it; a zero-bubble W makes all of its chunk final at its end,
// as the runtime reports them there.
#pragma once
#include <vector>

#include "core/config/config.h"
#include "core/config/rank_dims.h"
#include "core/sim/comm_model.h"
#include "core/sim/layer_costs.h"
#include "core/sim/pipeline_sim.h"
#include "core/topology/topology.h"

namespace ptdp {

// When a bucket is final: after `fraction` of chunk `chunk`'s last backward.
struct BucketNeed {
  int chunk = 0;
  double fraction = 0;
};

struct DpBucket {
  double comm_s = 0;              // its reduction over the data-parallel group
  bool deferred = false;          // holds the tied word embedding: waits for reduce_grads
  std::vector<BucketNeed> needs;  // the latest place of each chunk it holds
};

class DpOverlap {
 public:
  // The buckets of pipeline rank `pp_rank` of sizes `r`; `dp` is its data-parallel group.
  DpOverlap(const Config& cfg, const RankDims& r, const LayerCosts& layer, const EdgeCosts& edges,
            const CommModel& comm, Placement dp, int pp_rank);

  // When the rank's reduction ends, reduce_grads reached at `now`, given each
  // chunk's last backward (pipeline_sim.h's GradSpan; a chunk without one is
  // final at `now`). Never before `now`.
  double end(double now, const std::vector<GradSpan>& last) const;

  const std::vector<DpBucket>& buckets() const { return buckets_; }

 private:
  std::vector<DpBucket> buckets_;  // in the runtime's launch order
};

}  // namespace ptdp
