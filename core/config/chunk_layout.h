// Which layers (and whether the embedding and output layer) chunk c of
// pipeline rank r holds: virtual stage c·p + r of p·v stages, equal ones or
// plan.layers_per_stage's. The one definition of the split: the runtime, the
// memory model and the cost model all ask here.
#pragma once
#include <cstddef>

#include "core/config/model.h"
#include "core/config/plan.h"

namespace ptdp {

struct ChunkLayout {
  int virtual_stage = 0;  // c·p + r
  int first_layer = 0;    // global index of its first layer
  int num_layers = 0;     // l/(p·v), or plan.layers_per_stage[virtual_stage]
  bool has_embedding = false;
  bool has_head = false;
};

inline ChunkLayout chunk_layout(const Model& model, const Plan& plan, int pp_rank, int chunk) {
  ChunkLayout c;
  const int stages = plan.pp * plan.virtual_stages;
  c.virtual_stage = chunk * plan.pp + pp_rank;
  if (plan.layers_per_stage.empty()) {
    c.num_layers = model.layers / stages;
    c.first_layer = c.virtual_stage * c.num_layers;
  } else {  // validate() checked p·v entries, each positive, summing to l
    for (int s = 0; s < c.virtual_stage; ++s) c.first_layer += plan.layers_per_stage[static_cast<std::size_t>(s)];
    c.num_layers = plan.layers_per_stage[static_cast<std::size_t>(c.virtual_stage)];
  }
  c.has_embedding = c.virtual_stage == 0;
  c.has_head = c.virtual_stage == stages - 1;
  return c;
}

}  // namespace ptdp
