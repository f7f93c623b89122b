// Shared kv heads when t > g; see kv_sharing.h.
#include "core/model/kv_sharing.h"

#include "core/comm/tensor_collectives.h"

namespace ptdp {

namespace {

int group_size(const ModelContext& ctx) { return ctx.t() / ctx.model.kv(); }  // t/g

}  // namespace

ShardSpec kv_shard(const ModelContext& ctx) {
  if (!kv_shared(ctx)) return {0, ctx.t(), ctx.tp_rank()};
  return {0, ctx.model.kv(), ctx.tp_rank() / group_size(ctx)};
}

void begin_shared_kv_grads(ModelContext& ctx, const ParamList& shared) {
  if (ctx.tp_rank() % group_size(ctx) == 0) return;
  for (Param* p : shared) ctx.ops.zero(p->grad);
}

void sum_shared_kv_grads(ModelContext& ctx, const ParamList& shared) {
  const int g = ctx.model.kv(), slot = ctx.tp_rank() / group_size(ctx);
  for (Param* p : shared) {
    const std::int64_t n = p->grad.numel();
    Tensor all = ctx.ops.zeros({g * n}, DType::f32);  // (g, n): slot j for group j's head
    Tensor mine = all.rows(slot * n, n).view(p->grad.shape());
    ctx.ops.copy(p->grad, mine);
    all_reduce(ctx.tp, all);
    ctx.ops.copy(mine, p->grad);
  }
}

}  // namespace ptdp
