// ZeRO-2/3's gathers and reduce-scatters of one chunk's units.
#include "core/sim/sharded_comm.h"

#include <vector>

#include "core/accounting/memory_model.h"

namespace ptdp {

ShardedTraffic sharded_traffic(const Config& cfg, const RankDims& r, const ChunkLayout& l, const CommModel& comm,
                               Placement dp) {
  const Plan& p = cfg.plan;
  ShardedTraffic out;
  if (!p.shards_gradients() || p.dp < 2) return out;
  // The chunk's units: its layers, and the embedding or head it holds.
  std::vector<double> units(static_cast<std::size_t>(l.num_layers),
                            static_cast<double>(layer_shard_parameter_count(cfg.model, r)));
  if (l.has_embedding) units.push_back(static_cast<double>(chunk_parameter_count(cfg.model, r, {0, 0, 0, true, false})));
  if (l.has_head) units.push_back(static_cast<double>(chunk_parameter_count(cfg.model, r, {0, 0, 0, false, true})));
  const double e = element_bytes(p.precision);
  for (const double n : units) {
    if (p.shards_parameters()) out.gather_s += comm.all_gather(n * e, dp);
    // The micro-batch's gradient as the backward made it, in the compute type
    // (FSDP's and DeepSpeed's reduce dtype under mixed precision), added into
    // the owned shard in plan.grad_precision's type. A run that reduces in fp32
    // sends twice the bytes: an open question for Llama 3 (see docs/projection.md).
    out.reduce_scatter_s += comm.reduce_scatter(n * e, dp);
  }
  return out;
}

}  // namespace ptdp
