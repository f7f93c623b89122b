// ZeRO-2 and ZeRO-3 (FSDP) at run time: the PartResidency (part_residency.h)
// that keeps a rank's gradients, and under ZeRO-3 its weights, sharded over the
// d data-parallel ranks, moved unit by unit (shard_layout.h's units: a layer,
// the head, the embedding, the tied word).
//
// Gradients (dp_sharding gradients and parameters). No (N) gradient buffer
// exists. When a part's backward (or zero-bubble W) enters, each of its units
// gets a zeroed transient (c) fp32 buffer its parameters' grads view; when the
// last part of the chunk's backward that adds to a unit leaves, the buffer is
// reduce-scattered over dp into a (c/d) receive buffer, which is added into the
// unit's block of the owned (N/d) gradients, and both are released. So every
// micro-batch's gradients are reduce-scattered as they are made (ZeRO-2's cost:
// m reduce-scatters per unit per iteration instead of one reduction), and the
// owned block sums them over micro-batches. At most kFlushesInFlight
// reduce-scatters are outstanding, so the transient gradients stay within a
// few units. Sums are linear, so a zero-bubble W that adds to a unit after its
// B flushed simply flushes again.
//
// Weights (dp_sharding parameters). The rank keeps its owned (N/d) weights in
// the compute dtype (for fp32 they are AdamW's masters themselves). When a part
// enters, each of its units is all-gathered into a transient (c) buffer its
// parameters' values view, and the next part's gather in the same pass is
// issued before the part computes (prefetch); when it leaves the buffer is
// released. A recomputed forward runs inside its backward's enter; the
// embedding's backward needs no weights; a zero-bubble W gathers its layer
// again (its GEMM call reads the weight's shape, though not its values).
#pragma once
#include <deque>
#include <memory>
#include <vector>

#include "core/comm/communicator.h"
#include "core/model/part_residency.h"
#include "core/optim/shard_layout.h"

namespace ptdp {

class ShardedParts final : public PartResidency {
 public:
  // Reduce-scatters outstanding at once (each holding a (c) and a (c/d) buffer).
  static constexpr std::size_t kFlushesInFlight = 2;

  // The parameters hold their full values now; with `shard_weights` (ZeRO-3)
  // this rank's owned blocks are copied out and the values released.
  ShardedParts(Ops& ops, ShardLayout layout, Communicator& dp, bool shard_weights);

  const ShardLayout& layout() const { return layout_; }
  Tensor owned_grads() const { return owned_grads_; }      // (N/d) fp32
  Tensor owned_weights() const { return owned_weights_; }  // (N/d) compute dtype; undefined without shard_weights

  void enter(int chunk, int part, PartPass pass) override;
  void leave(int chunk, int part, PartPass pass) override;

  // Before an iteration's first forward: takes back weights materialize()
  // gathered (a checkpoint load may have written them) and zeroes the owned gradients.
  void begin_iteration();
  // Flushes what is left and waits: the owned gradients are complete.
  void finish_gradients();
  // Sums the owned block of the tied word's gradients over the embedding group
  // (first and last stage own the same rows of it); no-op when word is null.
  void reduce_tied(const Param* word, Communicator& embedding_group);
  // ZeRO-2, after the step: the owned fp32 weights (`owned`, (N/d)) all-gathered
  // unit by unit into every parameter's value.
  void install_weights(const Tensor& owned);
  // ZeRO-3: every parameter's full value in place, for a reader (a checkpoint,
  // a test), until begin_iteration.
  void materialize();

 private:
  struct Unit {
    Tensor grads;                      // (c) fp32 while bound
    Tensor weights;                    // (c) compute dtype while gathered or gathering
    std::unique_ptr<Request> gather;   // pending all-gather into weights
    int users = 0;                     // parts computing with the weights
  };
  struct Flush {
    std::unique_ptr<Request> request;
    Tensor sent, received;  // (c), (c/d) fp32
    int unit = 0;
  };
  bool needs_weights(int part, PartPass pass) const;
  void bind_grads(int u);
  void flush(int u);
  void complete_oldest_flush();
  void issue_gather(int u);
  void acquire_weights(int u);
  void release_weights(int u);
  Tensor owned_block(const Tensor& owned, int u) const;  // (c/d) rows of unit u

  Ops& ops_;
  ShardLayout layout_;
  Communicator& dp_;
  bool shard_weights_;
  std::vector<OwnedPiece> pieces_;
  Tensor owned_grads_, owned_weights_;
  std::vector<Unit> units_;
  std::deque<Flush> flushes_;
  bool materialized_ = false;
};

}  // namespace ptdp
