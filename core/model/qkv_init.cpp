// Initial q and kv rows of the fused tensor; see qkv_init.h.
#include "core/model/qkv_init.h"

namespace ptdp {

// The fused tensor as rows of d·h elements, (a, 3) of them: a shard that holds
// consecutive heads, `per_head` rows each starting at row `slot` of the 3,
// is init_full_index's split with inner = d·h, chunk = per_head, full_dim =
// 3·(fused heads from one held head to the next) and first = the first held
// head's fused row + slot.
void init_q_kv(ModelContext& ctx, const std::string& fused_name, float std, Param& q, Param& kv) {
  const Model& m = ctx.model;
  const std::int64_t dh = std::int64_t{m.head_dim()} * m.hidden, group = m.heads / m.kv();  // a/g
  ParamInit how;
  how.kind = Init::normal;
  how.std = std;
  how.key = param_key(ctx.seed(), fused_name);
  how.split = true;
  how.inner = dh;
  // q: heads [r·a/t, +a/t), row 0 (q) of each.
  const std::int64_t q_first = q.shard.index * (m.heads / q.shard.parts);
  how.chunk = 1;
  how.full_dim = 3;
  how.first = 3 * q_first;
  ctx.ops.init_param(q.value, how);
  // kv: kv heads [index·g/parts, +g/parts), rows 1 and 2 (k, v) of fused head j·(a/g).
  const std::int64_t kv_first = kv.shard.index * (m.kv() / kv.shard.parts);
  how.chunk = 2;
  how.full_dim = 3 * group;
  how.first = 3 * group * kv_first + 1;
  ctx.ops.init_param(kv.value, how);
}

}  // namespace ptdp
