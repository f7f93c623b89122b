// Op records' names and a fused op's parts; see layer_op.h.
#include "core/layer_ops/layer_op.h"

#include <array>

namespace ptdp {

std::string to_string(LayerPart p) {
  static constexpr std::array<const char*, 13> kNames = {"ln1", "q",   "kv",  "qk",  "core",      "proj",  "residual1",
                                                         "ln2", "fc1", "act", "fc2", "residual2", "kv_sum"};
  return kNames[static_cast<std::size_t>(p)];
}

std::string benchmark_stem(const LayerOp& op) { return std::string(kind_traits(op.kind).family) + "/" + to_string(op.part); }

std::string benchmark_name(const LayerOp& op) {
  const char* role = kind_traits(op.kind).role;
  return benchmark_stem(op) + "_" + (role != nullptr ? role : op.pass == Pass::backward ? "bwd" : "fwd");
}

LayerOp fused_part(const LayerOp& op, OpKind part) {
  LayerOp p = op;
  p.kind = part;
  if (kind_traits(part).basis == CostBasis::gemm) {
    p.bytes = 0, p.kernels = 0;
    return p;
  }
  p.part = LayerPart::act;
  p.sizes = {op.sizes[0], op.sizes[1]};
  p.gemm = {0, 0, 0, 0}, p.flops = 0;
  return p;
}

}  // namespace ptdp
