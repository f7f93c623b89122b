// Op records' names; see layer_op.h.
#include "core/model/layer_op.h"

#include <array>

namespace ptdp {

std::string to_string(LayerPart p) {
  static constexpr std::array<const char*, 13> kNames = {"ln1", "q",   "kv",  "qk",  "core",      "proj",  "residual1",
                                                         "ln2", "fc1", "act", "fc2", "residual2", "kv_sum"};
  return kNames[static_cast<std::size_t>(p)];
}

namespace {

std::string family_part(const std::string& family, LayerPart part) { return family + "/" + to_string(part); }

}  // namespace

std::string benchmark_stem(const LayerOp& op) { return family_part(kind_traits(op.kind).family, op.part); }

std::string benchmark_name(const LayerOp& op) {
  const char* role = kind_traits(op.kind).role;
  return benchmark_stem(op) + "_" + (role != nullptr ? role : op.pass == Pass::backward ? "bwd" : "fwd");
}

std::string gemm_benchmark_name(const LayerOp& op) {
  return family_part(kind_traits(OpKind::linear_forward).family, op.part) + (op.pass == Pass::backward ? "_dgrad" : "_fwd");
}

}  // namespace ptdp
