// Token-split collectives of sequence parallelism; see token_split.h.
#include "core/model/token_split.h"

#include "core/comm/tensor_collectives.h"

namespace ptdp {

Tensor gather_tokens(ModelContext& ctx, const Tensor& local) {
  if (!ctx.sp()) return local;
  Shape full = local.shape();
  full[1] *= ctx.t();  // (b, s/t, …) -> (b, s, …): rank blocks concatenated in rank order
  Tensor out = ctx.ops.empty(full, local.dtype());
  all_gather(ctx.tp, local, out);
  return out;
}

Tensor reduce_tokens(ModelContext& ctx, Tensor& partial) {
  if (!ctx.sp()) {
    all_reduce(ctx.tp, partial);
    return partial;
  }
  Shape local = partial.shape();
  local[1] /= ctx.t();  // (b, s, …) -> (b, s/t, …)
  Tensor out = ctx.ops.empty(local, partial.dtype());
  reduce_scatter(ctx.tp, partial, out);
  return out;
}

Tensor layernorm_backward_tokens(ModelContext& ctx, const Tensor& dy, const Tensor& x, const NormActs& a,
                                 Param& gamma, Param& beta) {
  if (!ctx.sp()) return layernorm_backward(ctx.ops, dy, x, a, gamma, beta);
  // The (h) fp32 gradients are identical on every rank before this micro-batch
  // (each earlier one ended with this all-reduce): rank 0 keeps that sum, the
  // others start from zero, so the all-reduce adds each rank's rows once.
  if (ctx.tp_rank() != 0) {
    ctx.ops.zero(gamma.grad);
    ctx.ops.zero(beta.grad);
  }
  Tensor dx = layernorm_backward(ctx.ops, dy, x, a, gamma, beta);
  all_reduce(ctx.tp, gamma.grad);
  all_reduce(ctx.tp, beta.grad);
  return dx;
}

}  // namespace ptdp
