// Vocabulary-parallel token embedding plus learned position embedding (none
// under position = rope: the layers turn q and k instead), on the first
// pipeline stage. Letters: b micro-batch, s sequence, h hidden, V vocabulary,
// t tensor-parallel size.
#pragma once
#include <memory>

#include "core/model/model_context.h"
#include "core/model/param.h"

namespace ptdp {

class Embedding {
 public:
  explicit Embedding(ModelContext& ctx);

  // x (b, s, h) from tokens (b, s) int32: each rank looks up the tokens of its
  // vocabulary shard, the all-reduce over t sums the rows, then positions are added.
  Tensor forward(const Tensor& tokens);
  // Accumulates the shard's rows of dwte and dwpe from dx (b, s, h).
  void backward(const Tensor& tokens, const Tensor& dx);

  Param& word() { return *wte_; }
  ParamList params() const;
  std::int64_t vocab_start() const;

 private:
  ModelContext& ctx_;
  std::unique_ptr<Param> wte_;  // (V'/t, h) rows [vocab_start, +V'/t), V' padded (Model::padded_vocab), tied
  std::unique_ptr<Param> wpe_;  // (s, h) replicated; null under RoPE
};

// The word embedding's full shape and split, shared by the input and output layers.
std::unique_ptr<Param> make_word_embedding(ModelContext& ctx);
// The untied output layer's weight "output.weight": the same shape and split.
std::unique_ptr<Param> make_output_weight(ModelContext& ctx);

}  // namespace ptdp
