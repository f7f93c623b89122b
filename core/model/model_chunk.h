// A model chunk: the layers of one virtual pipeline stage, with the embedding
// when it is the first stage and the output layer when it is the last. The
// runtime runs forward and backward of one micro-batch at a time on a chunk;
// recompute decides what a chunk keeps between the two.
// Letters: b micro-batch, s sequence, h hidden.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "core/config/chunk_layout.h"
#include "core/model/embedding.h"
#include "core/model/lm_head.h"
#include "core/model/part_residency.h"
#include "core/model/transformer_layer.h"

namespace ptdp {

// One micro-batch's data: tokens (b, s) for the embedding, targets (b, s) for the loss.
struct MicroBatch {
  Tensor tokens;
  Tensor targets;
};

// What one micro-batch leaves on a chunk between its forward and backward.
struct ChunkActs {
  std::vector<LayerActs> layers;
  HeadActs head;
  Tensor input;  // (b, s, h) received activation (chunks after the first stage)
};

// A part of a chunk whose gradients its backward completes at once: a layer
// (its local index, 0 first), the head or the embedding.
struct ChunkPart {
  static constexpr int kHead = -1;
  static constexpr int kEmbedding = -2;
  int part = 0;
  ParamList params;  // every parameter whose gradient this part adds to
};

// Called by backward after each part's gradients are complete, with its part number.
using PartDone = std::function<void(int part)>;

class ModelChunk {
 public:
  // `tied_word` is this rank's input word embedding when the head shares it.
  ModelChunk(ModelContext& ctx, const ChunkLayout& layout, Param* tied_word);

  // Forward of one micro-batch. Input: `input` (b, s, h), ignored on the first
  // stage (which embeds mb.tokens). Returns the output activation (b, s, h), or
  // on the last stage the per-token losses (b·s).
  Tensor forward(const MicroBatch& mb, const Tensor& input, ChunkActs& acts);
  // Backward of one micro-batch: dout (b, s, h) is the gradient of the output
  // (ignored on the last stage, which starts from the loss scaled by
  // grad_scale). Returns the gradient of the input (undefined on the first stage).
  // `part_done` (may be empty) runs after each part, in backward_parts() order.
  // With `later` (zero-bubble B) the layers' weight-gradient GEMMs are
  // recorded there for W; the embedding and the head do all their work here.
  Tensor backward(const MicroBatch& mb, const Tensor& dout, ChunkActs& acts, double grad_scale,
                  const PartDone& part_done = {}, DeferredWeightGrads* later = nullptr);

  // The parts in the order backward completes them: head, layers last to first, embedding.
  std::vector<ChunkPart> backward_parts() const;

  // Data-parallel sharding: every part's compute runs between residency's enter
  // and leave, this chunk numbered `index` (RankModel::attach).
  void attach(PartResidency* residency, int index) {
    residency_ = residency;
    index_ = index;
  }
  PartResidency* residency() const { return residency_; }
  int index() const { return index_; }

  const ChunkLayout& layout() const { return layout_; }
  ParamList params() const;
  Embedding* embedding() { return embedding_.get(); }
  LmHead* head() { return head_.get(); }

 private:
  void keep_for_backward(LayerActs& acts);
  void enter(int part, PartPass pass) const {
    if (residency_ != nullptr) residency_->enter(index_, part, pass);
  }
  void leave(int part, PartPass pass) const {
    if (residency_ != nullptr) residency_->leave(index_, part, pass);
  }
  ModelContext& ctx_;
  ChunkLayout layout_;
  std::unique_ptr<Embedding> embedding_;
  std::vector<std::unique_ptr<TransformerLayer>> layers_;
  std::unique_ptr<LmHead> head_;
  PartResidency* residency_ = nullptr;
  int index_ = 0;
};

}  // namespace ptdp
