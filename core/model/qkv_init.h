// The initial q and kv weights: rows of one virtual fused (a, 3, d, h) tensor
// drawn under the key of "layers.i.qkv.weight", GPT-2's packed layout (per
// query head its q, k and v rows), so that a GPT block (g = a) starts from
// exactly the weights of the fused QKV projection it had before issue 19.
// With g < a, kv head j takes the k and v rows of query head j·(a/g), the first
// of its group. Each rank draws only its shard (ParamInit geometry, any split).
// Letters: a heads, g kv heads, d head dim, h hidden.
#pragma once
#include <string>

#include "core/model/model_context.h"
#include "core/model/param.h"

namespace ptdp {

// Fills `q` ((a·d, h) split by rows) and `kv` ((g·2·d, h), split as kv_shard)
// with their rows of the fused tensor named `fused_name`, N(0, std²).
void init_q_kv(ModelContext& ctx, const std::string& fused_name, float std, Param& q, Param& kv);

}  // namespace ptdp
