// Which layers (and whether the embedding and output layer) chunk c of
// pipeline rank r holds: virtual stage c·p + r of p·v equal stages.
#pragma once
#include "core/config/model.h"
#include "core/config/plan.h"

namespace ptdp {

struct ChunkLayout {
  int virtual_stage = 0;  // c·p + r
  int first_layer = 0;    // global index of its first layer
  int num_layers = 0;     // l/(p·v)
  bool has_embedding = false;
  bool has_head = false;
};

inline ChunkLayout chunk_layout(const Model& model, const Plan& plan, int pp_rank, int chunk) {
  ChunkLayout c;
  const int stages = plan.pp * plan.virtual_stages;
  c.virtual_stage = chunk * plan.pp + pp_rank;
  c.num_layers = model.layers / stages;
  c.first_layer = c.virtual_stage * c.num_layers;
  c.has_embedding = c.virtual_stage == 0;
  c.has_head = c.virtual_stage == stages - 1;
  return c;
}

}  // namespace ptdp
