// ZeRO-2/3's data-parallel traffic inside the passes (plan.dp_sharding
// gradients or parameters), as the simulator prices it. Per pass of a chunk:
//   forward   (parameters) all-gather each unit's 16-bit weights before use;
//   backward  (parameters) all-gather them again (freed after the forward), and
//             (gradients, parameters) reduce-scatter each unit's gradient as its
//             backward ends, in the compute type, to be added into the owned
//             fp32 shard: every micro-batch, so that the gradient is never held
//             whole (Rajbhandari et al. 2020, ZeRO §5.2: each gradient is
//             reduced as the backward produces it, to the rank that owns its
//             partition, and its buffer freed; FSDP accumulating without a
//             reduce-scatter, under no_sync, keeps unsharded gradients, which
//             sharding gradients exists to avoid).
// Units as FSDP wraps them (memory_model.h's shard_unit_parameter_count): each
// decoder layer, the embedding and the head. The next unit's gather is
// prefetched while the current one computes, so the traffic runs on the data-
// parallel channel beside the pass; what it takes beyond the pass is exposed:
// exposed = max(0, traffic − the pass's own time).
#pragma once
#include "core/config/chunk_layout.h"
#include "core/config/config.h"
#include "core/config/rank_dims.h"
#include "core/sim/comm_model.h"

namespace ptdp {

// Seconds of one pass's data-parallel traffic on chunk `l` over the group `dp`.
struct ShardedTraffic {
  double gather_s = 0;          // all-gathers of the chunk's weights (one pass: forward, or backward)
  double reduce_scatter_s = 0;  // reduce-scatters of its gradients (backward, or a zero-bubble W)
};
ShardedTraffic sharded_traffic(const Config& cfg, const RankDims& r, const ChunkLayout& l, const CommModel& comm,
                               Placement dp);

// What of `traffic_s` a pass of `pass_s` seconds does not hide.
inline double exposed_s(double traffic_s, double pass_s) { return traffic_s > pass_s ? traffic_s - pass_s : 0.0; }

}  // namespace ptdp
