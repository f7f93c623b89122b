// Token-split collectives of sequence parallelism; see token_split.h.
#include "core/model/token_split.h"

#include "core/comm/tensor_collectives.h"

namespace ptdp {

Tensor gathered_tokens(ModelContext& ctx, const Tensor& local) {
  if (!ctx.sp()) return local;
  Shape full = local.shape();
  full[1] *= ctx.t();  // (b, s/t, …) -> (b, s, …): rank blocks concatenated in rank order
  return ctx.ops.empty(full, local.dtype());
}

Tensor gather_tokens(ModelContext& ctx, const Tensor& local) {
  Tensor out = gathered_tokens(ctx, local);
  if (ctx.sp()) all_gather(ctx.tp, local, out);
  return out;
}

void gather_tokens_then(ModelContext& ctx, const Tensor& local, Tensor& full, const RowBlockGemm& gemm) {
  if (ctx.tp_overlap()) return ring_gather_tokens(ctx, local, full, gemm);
  if (ctx.sp()) all_gather(ctx.tp, local, full);
  gemm(0, full.numel() / full.dim(-1));
}

Tensor reduce_tokens_of(ModelContext& ctx, const Shape& full_shape, const RowBlockGemmInto& gemm) {
  if (ctx.tp_overlap()) return ring_reduce_tokens(ctx, full_shape, gemm);
  Tensor partial = ctx.ops.empty(full_shape);
  gemm(0, shape_numel(full_shape) / full_shape.back(), partial);
  return reduce_tokens(ctx, partial);
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

Tensor norm_backward_tokens(ModelContext& ctx, const Tensor& dy, const Tensor& x, const NormActs& a,
                            NormParams& norm) {
  if (!ctx.sp()) return norm_backward(ctx.ops, dy, x, a, norm);
  // The (h) fp32 gradients are identical on every rank before this micro-batch
  // (each earlier one ended with this all-reduce): rank 0 keeps that sum, the
  // others start from zero, so the all-reduce adds each rank's rows once.
  ParamList params;
  norm.append_to(params);
  if (ctx.tp_rank() != 0)
    for (Param* p : params) ctx.ops.zero(p->grad);
  Tensor dx = norm_backward(ctx.ops, dy, x, a, norm);
  for (Param* p : params) all_reduce(ctx.tp, p->grad);
  return dx;
}

}  // namespace ptdp
