// The kinds of op the model runs, one per Ops call (core/kernels/ops.h), with
// what code that only classifies a kind asks: its name (the key a kernel
// benchmark writes and `ptdp calibrate` reads back), the benchmark family it is
// timed under, how the cost model prices it, the names of its sizes and, for a
// fused op, the kinds of its GEMM and its element-wise work timed alone. A
// decoder layer's records (layer_ops.h) use the calls it makes; GeLU alone and
// the embedding's are timed beside them.
// Adding a kind: one row in kOpKindTraits; the layer's records (layer_ops.cpp)
// and the recording Ops (recording_ops.h) then give and check it.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ptdp {

enum class OpKind : std::uint8_t {
  linear_forward,           // y = x·Wᵀ (+ b)
  linear_data_grad,         // dx = dy·W
  linear_weight_grad,       // dW += dyᵀ·x (+ db)
  linear_gelu_forward,      // fc1 with its bias and GeLU (a GEMM epilogue where the backend fuses it)
  linear_gelu_backward,     // fc2's data gradient with GeLU's gradient and fc1's bias gradient
  bias_backward,            // db += Σ rows of dy
  layernorm_forward,
  layernorm_backward,
  rmsnorm_forward,
  rmsnorm_backward,
  bias_residual_layernorm,  // x2 = y + b + x and its layernorm, one pass where fused
  bias_residual_add,        // y + b + x
  add,                      // a + b: a residual without bias, or two gradients summed
  swiglu_forward,
  swiglu_backward,
  rope_forward,
  rope_backward,
  attention_forward,        // the attention core: unfused (scores, softmax, context) or fused (flash)
  attention_backward,
  gelu_forward,             // GeLU alone: the element-wise part of linear_gelu_forward
  gelu_backward,            // its gradient alone: the element-wise part of linear_gelu_backward
  embedding_forward,        // the first stage's lookup (the embedding's benchmark adds the positions)
  embedding_backward,       // its scatter-add into the word embedding's gradient
};
inline constexpr std::size_t kOpKindCount = 23;

// How the cost model (core/sim/layer_costs.cpp) prices a kind, and so what its
// benchmark gives a calibration table (core/sim/calibrate.h).
enum class CostBasis : std::uint8_t {
  gemm,       // by its GEMM shape: a GEMM sample
  memory,     // by the bytes it moves: a sample of the achieved bandwidth
  attention,  // the attention core's own terms: batched GEMM samples (unfused) or the fused kernel's rate
  fused,      // a GEMM with element-wise work around it: priced as both, a sample of neither
};

// The sizes of an op, in the order an op record and a benchmark's arguments give them.
inline constexpr std::array<const char*, 3> kGemmSizes = {"m", "n", "k"};  // C (m×n) = A (m×k)·B (k×n)
inline constexpr std::array<const char*, 2> kRowSizes = {"rows", "cols"};  // element-wise over (rows, cols)
inline constexpr std::array<const char*, 5> kHeadSizes = {"b", "s", "heads", "d", "kv_heads"};  // q (b, s, heads, d), kv (b, s, kv_heads, 2, d)

inline constexpr std::array<const char*, 4> kEmbeddingSizes = {"b", "s", "h", "Vt"};  // tokens (b, s), rows (Vt, h)

struct OpKindTraits {
  OpKind kind;
  const char* name;    // "linear_forward"
  const char* family;  // benchmark family: "gemm/q_fwd", "attention/core_bwd", ...
  const char* role;    // the GEMM's role in a benchmark name (fwd, dgrad, wgrad); null: the pass's (fwd, bwd)
  CostBasis basis;
  std::span<const char* const> sizes;
  OpKind gemm_part = OpKind::linear_forward;  // fused: its GEMM alone (sizes m, n, k)
  OpKind elementwise_part = OpKind::add;      // fused: its element-wise work alone (sizes m, n as rows, cols)
};

inline constexpr std::array<OpKindTraits, kOpKindCount> kOpKindTraits = {{
    {OpKind::linear_forward, "linear_forward", "gemm", "fwd", CostBasis::gemm, kGemmSizes},
    {OpKind::linear_data_grad, "linear_data_grad", "gemm", "dgrad", CostBasis::gemm, kGemmSizes},
    {OpKind::linear_weight_grad, "linear_weight_grad", "gemm", "wgrad", CostBasis::gemm, kGemmSizes},
    {OpKind::linear_gelu_forward, "linear_gelu_forward", "bias_gelu", nullptr, CostBasis::fused, kGemmSizes,
     OpKind::linear_forward, OpKind::gelu_forward},
    {OpKind::linear_gelu_backward, "linear_gelu_backward", "bias_gelu", nullptr, CostBasis::fused, kGemmSizes,
     OpKind::linear_data_grad, OpKind::gelu_backward},
    {OpKind::bias_backward, "bias_backward", "bias", nullptr, CostBasis::memory, kRowSizes},
    {OpKind::layernorm_forward, "layernorm_forward", "layernorm", nullptr, CostBasis::memory, kRowSizes},
    {OpKind::layernorm_backward, "layernorm_backward", "layernorm", nullptr, CostBasis::memory, kRowSizes},
    {OpKind::rmsnorm_forward, "rmsnorm_forward", "rmsnorm", nullptr, CostBasis::memory, kRowSizes},
    {OpKind::rmsnorm_backward, "rmsnorm_backward", "rmsnorm", nullptr, CostBasis::memory, kRowSizes},
    {OpKind::bias_residual_layernorm, "bias_residual_layernorm", "residual_layernorm", nullptr, CostBasis::memory, kRowSizes},
    {OpKind::bias_residual_add, "bias_residual_add", "residual", nullptr, CostBasis::memory, kRowSizes},
    {OpKind::add, "add", "add", nullptr, CostBasis::memory, kRowSizes},
    {OpKind::swiglu_forward, "swiglu_forward", "swiglu", nullptr, CostBasis::memory, kRowSizes},
    {OpKind::swiglu_backward, "swiglu_backward", "swiglu", nullptr, CostBasis::memory, kRowSizes},
    {OpKind::rope_forward, "rope_forward", "rope", nullptr, CostBasis::memory, kHeadSizes},
    {OpKind::rope_backward, "rope_backward", "rope", nullptr, CostBasis::memory, kHeadSizes},
    {OpKind::attention_forward, "attention_forward", "attention", nullptr, CostBasis::attention, kHeadSizes},
    {OpKind::attention_backward, "attention_backward", "attention", nullptr, CostBasis::attention, kHeadSizes},
    {OpKind::gelu_forward, "gelu_forward", "gelu", nullptr, CostBasis::memory, kRowSizes},
    {OpKind::gelu_backward, "gelu_backward", "gelu", nullptr, CostBasis::memory, kRowSizes},
    {OpKind::embedding_forward, "embedding_forward", "embedding", nullptr, CostBasis::memory, kEmbeddingSizes},
    {OpKind::embedding_backward, "embedding_backward", "embedding", nullptr, CostBasis::memory, kEmbeddingSizes},
}};

// Row i describes OpKind i, for every kind (the table is indexed by the enum).
constexpr bool op_kind_table_in_order() {
  for (std::size_t i = 0; i < kOpKindCount; ++i)
    if (static_cast<std::size_t>(kOpKindTraits[i].kind) != i) return false;
  return static_cast<std::size_t>(OpKind::embedding_backward) + 1 == kOpKindCount;
}
static_assert(op_kind_table_in_order(), "kOpKindTraits needs one row per OpKind, in enum order");

constexpr const OpKindTraits& kind_traits(OpKind k) { return kOpKindTraits[static_cast<std::size_t>(k)]; }
// The kind named `name` by kind_traits(k).name, or none.
std::optional<OpKind> op_kind_from_name(std::string_view name);

}  // namespace ptdp
