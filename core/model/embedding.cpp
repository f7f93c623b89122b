// Vocabulary-parallel embedding: lookup of the local shard, all-reduce, positions.
// Under sequence parallelism the all-reduce is a reduce-scatter to this rank's
// (b, s/t, h) token rows, with the positions added before it by rank 0 only
// (every other shard adds exact zeros to a token row it does not hold).
#include "core/model/embedding.h"

#include "core/model/token_split.h"

namespace ptdp {

// (V', h) with V' the padded vocabulary: the padded rows are initialised like the
// others and take part in the softmax, but no token or target ever selects them.
namespace {

std::unique_ptr<Param> make_vocab_weight(ModelContext& ctx, const char* name) {
  return make_param(ctx.ops, name, {ctx.model.padded_vocab(), ctx.model.hidden}, {0, ctx.t(), ctx.tp_rank()},
                    Init::normal, ctx.init_std(), ctx.seed(), true);
}

}  // namespace

std::unique_ptr<Param> make_word_embedding(ModelContext& ctx) { return make_vocab_weight(ctx, "embedding.wte"); }
std::unique_ptr<Param> make_output_weight(ModelContext& ctx) { return make_vocab_weight(ctx, "output.weight"); }

Embedding::Embedding(ModelContext& ctx) : ctx_(ctx), wte_(make_word_embedding(ctx)) {
  if (ctx.model.position == Position::rope) return;
  wpe_ = make_param(ctx.ops, "embedding.wpe", {ctx.model.seq_len, ctx.model.hidden}, {}, Init::normal,
                    ctx.init_std(), ctx.seed(), true);
  wpe_->count_in_norm = ctx.tp_rank() == 0;
}

ParamList Embedding::params() const {
  if (!wpe_) return {wte_.get()};
  return {wte_.get(), wpe_.get()};
}

// From the shard's shape, not its value: ZeRO-3 holds no weights in the embedding's backward.
std::int64_t Embedding::vocab_start() const { return wte_->shard_shape()[0] * ctx_.tp_rank(); }

Tensor Embedding::forward(const Tensor& tokens) {
  const std::int64_t b = tokens.dim(0), s = tokens.dim(1);
  Tensor x = ctx_.ops.empty({b, s, ctx_.model.hidden});
  ctx_.ops.embedding_forward(tokens, wte_->value, vocab_start(), x);
  if (ctx_.sp()) {
    if (ctx_.tp_rank() == 0 && wpe_) ctx_.ops.position_forward(wpe_->value, x);
    return reduce_tokens(ctx_, x);  // (b, s/t, h)
  }
  x = reduce_tokens(ctx_, x);  // rows of other shards are zero here
  if (wpe_) ctx_.ops.position_forward(wpe_->value, x);
  return x;
}

// dx (b, s, h), or this rank's (b, s/t, h) rows under sequence parallelism:
// gathered first, so wpe's replicated gradient is complete on every rank.
void Embedding::backward(const Tensor& tokens, const Tensor& dx_local) {
  const Tensor dx = gather_tokens(ctx_, dx_local);
  ctx_.ops.embedding_backward(tokens, dx, vocab_start(), wte_->grad);
  if (wpe_) ctx_.ops.position_backward(dx, wpe_->grad);
}

}  // namespace ptdp
