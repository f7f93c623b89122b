// Model chunks: per-micro-batch forward/backward with activation recompute.
#include "core/model/model_chunk.h"

#include <algorithm>

namespace ptdp {

ModelChunk::ModelChunk(ModelContext& ctx, const ChunkLayout& layout, Param* tied_word)
    : ctx_(ctx), layout_(layout) {
  if (layout.has_embedding) embedding_ = std::make_unique<Embedding>(ctx);
  for (int i = 0; i < layout.num_layers; ++i)
    layers_.push_back(std::make_unique<TransformerLayer>(ctx, layout.first_layer + i));
  if (layout.has_head) {
    Param* word = embedding_ ? &embedding_->word() : tied_word;
    head_ = std::make_unique<LmHead>(ctx, word);
  }
}

ParamList ModelChunk::params() const {
  ParamList list;
  if (embedding_) list = embedding_->params();
  for (const auto& layer : layers_)
    for (Param* p : layer->params()) list.push_back(p);
  if (head_)
    for (Param* p : head_->params()) list.push_back(p);
  return list;
}

void ModelChunk::keep_for_backward(LayerActs& acts) {
  if (ctx_.plan.recompute == Recompute::full) acts.drop_all_but_input();
}

Tensor ModelChunk::forward(const MicroBatch& mb, const Tensor& input, ChunkActs& acts) {
  constexpr PartPass kF = PartPass::forward;
  Tensor x = input;
  if (embedding_) {
    enter(ChunkPart::kEmbedding, kF);
    x = embedding_->forward(mb.tokens);
    leave(ChunkPart::kEmbedding, kF);
  }
  acts.input = input;
  acts.layers.resize(layers_.size());
  const bool keep_scores = ctx_.plan.recompute == Recompute::none;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    enter(static_cast<int>(i), kF);
    x = layers_[i]->forward(x, acts.layers[i], keep_scores);
    leave(static_cast<int>(i), kF);
    keep_for_backward(acts.layers[i]);
  }
  if (!head_) return x;
  enter(ChunkPart::kHead, kF);
  Tensor losses = head_->forward(x, mb.targets, acts.head);
  leave(ChunkPart::kHead, kF);
  return losses;
}

std::vector<ChunkPart> ModelChunk::backward_parts() const {
  std::vector<ChunkPart> parts;
  if (head_) {
    ParamList list = head_->params();
    if (std::find(list.begin(), list.end(), &head_->word()) == list.end()) list.push_back(&head_->word());
    parts.push_back({ChunkPart::kHead, list});
  }
  for (std::size_t i = layers_.size(); i-- > 0;) parts.push_back({static_cast<int>(i), layers_[i]->params()});
  if (embedding_) parts.push_back({ChunkPart::kEmbedding, embedding_->params()});
  return parts;
}

Tensor ModelChunk::backward(const MicroBatch& mb, const Tensor& dout, ChunkActs& acts, double grad_scale,
                            const PartDone& part_done, DeferredWeightGrads* later) {
  constexpr PartPass kB = PartPass::backward;
  const auto done = [&](int part) {
    leave(part, kB);
    if (part_done) part_done(part);
  };
  Tensor dx = dout;
  if (head_) {
    enter(ChunkPart::kHead, kB);
    dx = head_->backward(mb.targets, acts.head, grad_scale);
    done(ChunkPart::kHead);
  }
  acts.head = HeadActs{};
  for (std::size_t i = layers_.size(); i-- > 0;) {
    LayerActs& a = acts.layers[i];
    enter(static_cast<int>(i), kB);
    if (later != nullptr) later->set_part(static_cast<int>(i));
    if (ctx_.plan.recompute == Recompute::full) layers_[i]->forward(a.x, a, true);  // recompute
    dx = layers_[i]->backward(dx, a, later);
    a = LayerActs{};  // free this layer's activations as soon as its backward is done
    done(static_cast<int>(i));
  }
  if (embedding_) {
    enter(ChunkPart::kEmbedding, kB);
    embedding_->backward(mb.tokens, dx);
    done(ChunkPart::kEmbedding);
    return Tensor{};
  }
  return dx;
}

}  // namespace ptdp
