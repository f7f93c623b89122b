// Where a chunk's parts find their weights and put their gradients when the
// data-parallel group shards them (dp_sharding gradients: ZeRO-2; parameters:
// ZeRO-3, FSDP). A part is a layer, the head or the embedding (ChunkPart's
// numbering). The model calls enter before a part computes and leave after it;
// the implementation (core/optim/sharded_parts.h) gathers weights, binds
// transient gradient buffers and reduce-scatters them. Without sharding no
// residency is attached and nothing is called.
#pragma once

namespace ptdp {

// What the part is about to run: its forward, its backward (the whole one, or a
// zero-bubble B, with any recomputed forward inside), or a zero-bubble W (the
// deferred weight-gradient GEMMs).
enum class PartPass { forward, backward, weight };

class PartResidency {
 public:
  virtual ~PartResidency() = default;
  // Before part `part` of chunk `chunk` runs `pass`: its weights (ZeRO-3) and,
  // except in forward, its gradients must be in place when this returns.
  virtual void enter(int chunk, int part, PartPass pass) = 0;
  // After it: what the part no longer needs may be released.
  virtual void leave(int chunk, int part, PartPass pass) = 0;
};

}  // namespace ptdp
