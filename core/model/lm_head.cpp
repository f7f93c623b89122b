// Final norm, vocabulary-parallel logits and cross-entropy. Under sequence
// parallelism x and lnf hold this rank's (b, s/t, h) token rows; lnf is gathered
// to (b, s, h) for the logits (again in backward) and the input gradient
// reduce-scattered back to the local rows.
#include "core/model/lm_head.h"

#include "core/comm/tensor_collectives.h"
#include "core/model/token_split.h"
#include "core/model/embedding.h"

namespace ptdp {

LmHead::LmHead(ModelContext& ctx, Param* word) : ctx_(ctx), lnf_(ctx, "final_ln."), word_(word) {
  if (!ctx.model.tied_embeddings) {
    own_word_ = make_output_weight(ctx);
    word_ = own_word_.get();
  } else if (word_ == nullptr) {
    own_word_ = make_word_embedding(ctx);
    own_word_->tied_copy = true;
    own_word_->count_in_norm = false;  // the first stage's copy is counted
    word_ = own_word_.get();
  }
}

ParamList LmHead::params() const {
  ParamList list;
  lnf_.append_to(list);
  if (own_word_) list.push_back(own_word_.get());
  return list;
}

Tensor LmHead::forward(const Tensor& x, const Tensor& targets, HeadActs& a) {
  Ops& ops = ctx_.ops;
  a.x = x;
  a.lnf = norm_forward(ops, x, lnf_);
  const Tensor lnf = gather_tokens(ctx_, a.lnf.y);  // (b, s, h)
  const std::int64_t n = lnf.dim(0) * lnf.dim(1), vt = word_->value.dim(0);
  const std::int64_t vocab_start = vt * ctx_.tp_rank();
  a.logits = ops.empty({n, vt});
  ops.linear_forward(lnf.view({n, x.dim(2)}), word_->value, Tensor{}, a.logits);
  a.row_max = ops.empty({n}, DType::f32);
  ops.ce_row_max(a.logits, a.row_max);
  all_reduce(ctx_.tp, a.row_max, ReduceOp::max);
  a.sum_exp = ops.empty({n}, DType::f32);
  ops.ce_row_sum_exp(a.logits, a.row_max, a.sum_exp);
  all_reduce(ctx_.tp, a.sum_exp);
  Tensor target_logit = ops.empty({n}, DType::f32);
  ops.ce_target_logit(a.logits, targets, vocab_start, target_logit);
  all_reduce(ctx_.tp, target_logit);  // zero on the ranks that do not hold the target
  Tensor loss = ops.empty({n}, DType::f32);
  ops.ce_loss(a.row_max, a.sum_exp, target_logit, loss);
  return loss;
}

Tensor LmHead::backward(const Tensor& targets, HeadActs& a, double grad_scale) {
  Ops& ops = ctx_.ops;
  const std::int64_t n = a.logits.dim(0), h = a.x.dim(2);
  Tensor dlogits = ops.empty(a.logits.shape());
  ops.ce_backward(a.logits, targets, a.row_max, a.sum_exp, word_->value.dim(0) * ctx_.tp_rank(), grad_scale,
                  dlogits);
  const Tensor lnf = gather_tokens(ctx_, a.lnf.y);  // (b, s, h)
  Tensor dlnf = ops.empty(lnf.shape());
  Tensor no_bias;
  ops.linear_backward(dlogits, lnf.view({n, h}), word_->value, dlnf, word_->grad, no_bias);
  dlnf = reduce_tokens(ctx_, dlnf);  // f: every vocabulary shard used all of lnf
  return norm_backward_tokens(ctx_, dlnf, a.x, a.lnf, lnf_);
}

}  // namespace ptdp
