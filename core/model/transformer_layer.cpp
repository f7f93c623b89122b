// A decoder layer's parameters and its forward and backward as the two blocks
// (attention_block.cpp, mlp_block.cpp).
// Forward:  n1 = Norm(x); q = n1·Wqᵀ (+ bq); kv = n1·Wkvᵀ (+ bkv); RoPE(q, k) when
//           position = rope; attn = Attn(q, kv); x2 = x + g(attn·Wprojᵀ) (+ bproj);
//           n2 = Norm(x2); z = Act(n2·W1ᵀ (+ b1)); y = x2 + g(z·W2ᵀ) (+ b2).
// Act is GeLU, or SwiGLU on W1's [gate; up] rows. g is the all-reduce of the
// row-parallel partial sums (identity in backward); its conjugate f (identity
// forward) all-reduces the input gradient of each column-parallel projection in
// backward. Under sequence parallelism x, x2, the norms and y hold this rank's
// (b, s/t, h) token rows: g becomes a reduce-scatter (conjugate: all-gather of
// the output gradient) and f an all-gather of the norm output (conjugate:
// reduce-scatter of its gradient). Norm outputs are kept as local rows and
// gathered again in backward. Under tp_comm_overlap the f before each
// column-parallel GEMM (forward, and the output gradient's gather in backward)
// and the g after each row-parallel one (and the input gradient's
// reduce-scatter) run as rings, block by block with the GEMMs (tp_overlap.h).
#include "core/model/transformer_layer.h"

#include "core/model/kv_sharing.h"
#include "core/model/qkv_init.h"

namespace ptdp {

void LayerActs::drop_all_but_input() {
  Tensor keep = x;
  *this = LayerActs{};
  x = keep;
}

TransformerLayer::TransformerLayer(ModelContext& ctx, int layer_index)
    : ctx_(ctx),
      ln1_(ctx, "layers." + std::to_string(layer_index) + ".ln1."),
      ln2_(ctx, "layers." + std::to_string(layer_index) + ".ln2.") {
  const Model& m = ctx.model;
  const std::int64_t h = m.hidden, f = m.ffn(), head_dim = m.head_dim(), g = m.kv();
  const int t = ctx.t();
  const std::string p = "layers." + std::to_string(layer_index) + ".";
  const ShardSpec rep{}, rows{0, t, ctx.tp_rank()}, cols{1, t, ctx.tp_rank()}, kv = kv_shard(ctx);
  const auto make = [&](const char* name, Shape shape, ShardSpec shard, Init init, float std, bool decay) {
    return make_param(ctx.ops, p + name, std::move(shape), shard, init, std, ctx.seed(), decay);
  };
  const auto make_bias = [&](const char* name, Shape shape, ShardSpec shard) {
    return m.bias ? make(name, std::move(shape), shard, Init::zeros, 0, false) : nullptr;
  };
  const float std = ctx.init_std(), out_std = ctx.residual_init_std();
  q_w_ = make("q.weight", {m.heads * head_dim, h}, rows, Init::zeros, 0, true);
  q_b_ = make_bias("q.bias", {m.heads * head_dim}, rows);
  kv_w_ = make("kv.weight", {g * 2 * head_dim, h}, kv, Init::zeros, 0, true);
  init_q_kv(ctx, p + "qkv.weight", std, *q_w_, *kv_w_);  // GPT-2's fused QKV draws
  kv_b_ = make_bias("kv.bias", {g * 2 * head_dim}, kv);
  proj_w_ = make("proj.weight", {h, m.heads * head_dim}, cols, Init::normal, out_std, true);
  proj_b_ = make_bias("proj.bias", {h}, rep);
  // SwiGLU: [gate; up] as one (2, f, h) weight split on f, so a rank's rows are
  // its gate and up shards, one GEMM.
  const bool swiglu = m.activation == Activation::swiglu;
  const ShardSpec fc1_rows = swiglu ? ShardSpec{1, t, ctx.tp_rank()} : rows;
  fc1_w_ = make("fc1.weight", swiglu ? Shape{2, f, h} : Shape{f, h}, fc1_rows, Init::normal, std, true);
  fc1_b_ = make_bias("fc1.bias", swiglu ? Shape{2, f} : Shape{f}, fc1_rows);
  fc2_w_ = make("fc2.weight", {h, f}, cols, Init::normal, out_std, true);
  fc2_b_ = make_bias("fc2.bias", {h}, rep);
  // Replicated parameters have identical gradients on every tensor-parallel
  // rank; only rank 0's copy counts in the global gradient norm. A shared kv
  // head: the first rank of its group (kv_sharing.h).
  for (Param* q : params())
    if (q->shard.dim < 0) q->count_in_norm = ctx.tp_rank() == 0;
  if (kv_shared(ctx))
    for (Param* q : {kv_w_.get(), kv_b_.get()})
      if (q != nullptr) q->count_in_norm = ctx.tp_rank() % (t / g) == 0;
}

ParamList TransformerLayer::params() const {
  ParamList list;
  ln1_.append_to(list);
  for (const auto* p : {&q_w_, &q_b_, &kv_w_, &kv_b_, &proj_w_, &proj_b_})
    if (*p) list.push_back(p->get());
  ln2_.append_to(list);
  for (const auto* p : {&fc1_w_, &fc1_b_, &fc2_w_, &fc2_b_})
    if (*p) list.push_back(p->get());
  return list;
}

Tensor TransformerLayer::fc1_matrix() const {
  const Tensor& w = fc1_w_->value;
  return w.view({w.numel() / w.dim(-1), w.dim(-1)});
}

Tensor TransformerLayer::forward(const Tensor& x, LayerActs& acts, bool keep_scores) {
  acts.x = x;
  attention_block(acts, keep_scores);
  return mlp_block(acts);
}

Tensor TransformerLayer::backward(const Tensor& dy, LayerActs& acts, DeferredWeightGrads* later) {
  Tensor dx2 = mlp_backward(dy, acts, later);
  return attention_backward(dx2, acts, later);
}

}  // namespace ptdp
