// The sizes one rank works on: a micro-batch's tensors split over t. Built once
// from (Model, Plan) where a computation starts (a cost model, a memory model, a
// benchmark) and passed to everything it calls.
#pragma once
#include <cstdint>

#include "core/config/model.h"
#include "core/config/plan.h"

namespace ptdp {

// Bytes per element of the compute type: 4 for fp32, 2 for bf16 and fp16.
int element_bytes(Precision precision);
// Bytes per element of the plan's main gradients (plan.grad_precision).
int grad_element_bytes(const Plan& plan);

struct RankDims {
  std::int64_t b;   // micro-batch (sequences)
  std::int64_t s;   // sequence length
  std::int64_t n;   // tokens of a micro-batch, b·s
  std::int64_t nr;  // token rows of the replicated tensors on this rank: n/t under
                    // sequence parallelism (core/model/token_split.h), else n
  std::int64_t h;   // hidden size (replicated over t)
  std::int64_t f;   // MLP inner width on this rank, ffn/t (SwiGLU: each of gate and up)
  std::int64_t a;   // attention heads on this rank, a/t
  std::int64_t g;   // key/value heads on this rank: g/t when t <= g, else 1, that head
                    // replicated on t/g ranks (grouped-query attention; GPT: g = a)
  std::int64_t kv_copies;  // ranks holding each kv head: t/g when t > g, else 1
  std::int64_t head_dim;  // d, h/a
  std::int64_t vt;  // padded vocabulary rows on this rank, V_padded/t
  int t;            // tensor-parallel size
  int e;            // bytes per element of the compute type

  // Exact splits: config validation checks that t divides heads, hidden, ffn and padded V,
  // and that t and g divide one another.
  RankDims(const Model& m, const Plan& p);
};

}  // namespace ptdp
