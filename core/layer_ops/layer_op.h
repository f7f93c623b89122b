// One op of a decoder layer as data: which Ops call it is, at what sizes, the
// GEMM it runs, the bytes it moves and the FLOPs it does, the bytes it keeps
// for backward and the collective beside it. layer_ops.h gives a layer's list
// for a rank, a plan and a pass; the cost model, the memory model, the FLOP
// count, the kernel benchmarks and calibration read it, and a test holds it
// against the calls the real layer makes (recording_ops.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/topology/collective.h"
#include "core/layer_ops/gemm_shape.h"
#include "core/layer_ops/op_kind.h"

namespace ptdp {

// The passes of a layer: its forward; its backward as it runs (with what
// recompute re-runs in it); what recompute re-runs alone.
enum class Pass : std::uint8_t { forward, backward, recompute };

// Which of the layer's tensors or linears an op makes: the record's name.
enum class LayerPart : std::uint8_t {
  ln1, q, kv,
  qk,    // RoPE turning q and k
  core,  // the attention core
  proj, residual1, ln2, fc1,
  act,   // GeLU or SwiGLU (GeLU rides with fc1 where fused)
  fc2, residual2,
  kv_sum,  // backward: q's and kv's input gradients summed
};
std::string to_string(LayerPart p);  // "ln1", "q", ...

// A collective beside an op, over the tensor-parallel group (or the t/g ranks
// sharing one kv head).
struct OpCollective {
  Collective kind = Collective::all_reduce;
  double bytes = 0;     // 0: none. A rank's buffer (all-reduce) or the whole gathered or scattered one
  int ranks = 1;        // the group's size
  bool before = false;  // gathers the op's input first; else sums what the op wrote, after it
  int count = 1;        // how many such collectives (a layernorm's gain and bias gradients: 2)
  bool any() const { return bytes > 0; }
};

struct LayerOp {
  OpKind kind = OpKind::linear_forward;
  LayerPart part = LayerPart::ln1;
  Pass pass = Pass::forward;  // backward, or recompute: re-run during backward
  std::vector<std::int64_t> sizes;  // named by kind_traits(kind).sizes
  GemmShape gemm{0, 0, 0, 0};  // the GEMM it runs (attention: the s×s scores, b·heads of them); zeros: none
  double bytes = 0;            // memory-bound traffic as the cost model prices it (layer_ops.h)
  int kernels = 0;             // memory-bound launches as priced
  double flops = 0;            // model FLOPs (core/accounting/flops.h's convention)
  std::int64_t saved = 0;      // bytes kept for backward (forward records)
  OpCollective collective;
  bool with_previous = false;  // kv beside q: one input, one summed input gradient, one collective

  bool has_gemm() const { return gemm.m > 0; }
};

// The kernel benchmark that times the op: its kind's family, its part and its
// role or pass: "gemm/q_fwd", "layernorm/ln1_bwd", "attention/core_fwd".
std::string benchmark_name(const LayerOp& op);
// The name without its role or pass: "attention/core" (its runs: _fwd, _bwd).
std::string benchmark_stem(const LayerOp& op);
// A fused op's part as a record of its own kind (op_kind.h's gemm_part or
// elementwise_part), for timing it alone: its GEMM (the same sizes: "gemm/fc1_fwd"
// of linear_gelu_forward), or its element-wise work on the activation ((m, n) as
// rows and cols: "gelu/act_fwd").
LayerOp fused_part(const LayerOp& op, OpKind part);

}  // namespace ptdp
