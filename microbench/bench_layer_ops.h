// The kernel benchmarks of a decoder layer's ops: one per kind and sizes of
// its records (core/layer_ops/layer_ops.h), timing the call the layer makes at the
// record's place (core/model/layer_calls.h) on the same tensors.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "core/config/config.h"
#include "core/kernels/ops.h"
#include "core/layer_ops/op_kind.h"

namespace ptdp::bench {

// A plan the layer's ops are timed under, on ops made for it, and which kinds it times.
struct OpVariant {
  Config cfg;
  std::shared_ptr<Ops> ops;
  std::string tag;                     // appended to each name: "" for the plan's own ops, "/unfused_ops", ...
  std::function<bool(OpKind)> times;   // the kinds this variant changes
};

// One benchmark per kind and sizes of the variant's forward and backward
// records, named benchmark_name(record) + tag and labelled with the kind's
// name; a fused op's GEMM and element-wise work also alone (fused_part). Counters: the
// sizes by name, a GEMM's m, n, k and batch, the attention's plan (flash,
// fused_ops), and for the plan's own ops how often a single-rank micro-batch
// runs each (op_forward, op_backward: occurrences times the layers).
void register_layer_ops(const OpVariant& v, Device device, double peak_flops, std::size_t flush_bytes);

}  // namespace ptdp::bench
