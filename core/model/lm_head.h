// The output side of the last pipeline stage: final norm, logits through the
// tied word embedding or, with tied_embeddings false, an output weight of its
// own (vocabulary-parallel either way: each rank computes V/t columns),
// and the vocabulary-parallel cross-entropy, which all-reduces only per-token
// maxima and sums (never the logits). Letters as in embedding.h; n = b·s.
#pragma once
#include <memory>

#include "core/model/norm.h"
#include "core/model/model_context.h"
#include "core/model/param.h"

namespace ptdp {

struct HeadActs {
  Tensor x;                 // (b, s, h) input from the last layer
  NormActs lnf;             // (b, s, h) final norm and its statistics
  Tensor logits;            // (n, V'/t) this rank's shard of the padded vocabulary
  Tensor row_max, sum_exp;  // (n) global over the vocabulary, fp32
};

class LmHead {
 public:
  // `word` is the first stage's embedding when it lives on this rank (tied in
  // place); null makes a copy that the runtime keeps in sync by an all-reduce
  // of gradients over the embedding group. Untied (model.tied_embeddings
  // false): `word` is ignored and the head has its own "output.weight".
  LmHead(ModelContext& ctx, Param* word);

  // Per-token losses (n) fp32, identical on every tensor-parallel rank.
  Tensor forward(const Tensor& x, const Tensor& targets, HeadActs& acts);
  // dx (b, s, h) for loss·grad_scale summed over tokens.
  Tensor backward(const Tensor& targets, HeadActs& acts, double grad_scale);

  ParamList params() const;
  Param& word() { return *word_; }

 private:
  ModelContext& ctx_;
  NormParams lnf_;                   // (h) [, (h)] replicated
  std::unique_ptr<Param> own_word_;  // tied copy when the embedding is on another stage, or the untied output
  Param* word_;                      // (V'/t, h)
};

}  // namespace ptdp
