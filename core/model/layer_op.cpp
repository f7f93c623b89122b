// Op records' names; see layer_op.h.
#include "core/model/layer_op.h"

#include <array>

namespace ptdp {

std::string to_string(LayerPart p) {
  static constexpr std::array<const char*, 13> kNames = {"ln1", "q",   "kv",  "rope",      "attention", "proj",  "residual1",
                                                         "ln2", "fc1", "act", "fc2", "residual2", "kv_sum"};
  return kNames[static_cast<std::size_t>(p)];
}

namespace {

std::string op_benchmark(const std::string& family, LayerPart part, const char* role) {
  const std::string name = to_string(part);
  return family + "/" + (name == family ? std::string(role) : name + "_" + role);
}

}  // namespace

std::string benchmark_name(const LayerOp& op) {
  const OpKindTraits& t = kind_traits(op.kind);
  return op_benchmark(t.family, op.part, t.role != nullptr ? t.role : op.pass == Pass::backward ? "bwd" : "fwd");
}

std::string gemm_benchmark_name(const LayerOp& op) {
  return op_benchmark("gemm", op.part, op.pass == Pass::backward ? "dgrad" : "fwd");
}

}  // namespace ptdp
