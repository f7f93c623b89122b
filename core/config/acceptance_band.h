// Acceptance bands of a machine profile: what `ptdp accept` requires of each
// figure it measures on that machine. Each band is an expected value, a
// tolerance and the source of the expected value; every metric is higher-is-
// better, so a value holds its band when value >= expected·(1 − tolerance).
#pragma once
#include <array>
#include <string>
#include <string_view>

#include "core/config/bounds.h"
#include "core/config/field.h"

namespace ptdp {

// Each field's JSON key, bound and meaning: visit_fields below.
struct AcceptanceBand {
  double expected = 0;
  double tolerance = 0;
  std::string source;

  double lowest() const { return expected * (1 - tolerance); }
  bool holds(double value) const { return value >= lowest(); }
};

// The field table of a band (core/config/field.h), in reading order; a blank
// source is refused by validate(const Machine&).
template <FieldsOf<AcceptanceBand> M, class Visit>
void visit_fields(M& b, Visit&& v) {
  v({.key = "expected", .description = "the expected value, in the metric's unit",
     .bound = interval(0, true, kMaxRate, false), .required = true}, b.expected);
  v({.key = "tolerance", .description = "the fraction below `expected` still accepted (1 would accept anything)",
     .bound = interval(0, false, 1, true), .required = true}, b.tolerance);
  v({.key = "source", .description = "where `expected` comes from (a measurement's command and date, or its "
                                     "derivation); not blank", .required = true}, b.source);
}

// The metrics a band may name (the profile's "acceptance" keys), with what each measures.
using AcceptanceMetric = KeyName;
inline constexpr std::array<AcceptanceMetric, 7> kAcceptanceMetrics{{
    {"gemm_tflops", "TFLOP/s of one large GEMM (the kernel model's fc1 forward) in the profile's precision"},
    {"attention_tflops", "TFLOP/s of attention forward and backward together at the kernel model's shapes"},
    {"allreduce_busbw_gbs_intra", "all-reduce bus bandwidth in GB/s among one node's ranks, the best over message sizes"},
    {"allreduce_busbw_gbs_inter", "all-reduce bus bandwidth in GB/s among the ranks of --nodes nodes, the best over sizes"},
    {"train_tflops_per_gpu", "model TFLOP/s per GPU of data-parallel training over one node"},
    {"train_llama_tflops_per_gpu", "the same for a Llama-style block (Llama 3 8B on GPUs, tiny-llama on the CPU)"},
    {"weak_scaling_efficiency", "per-GPU model TFLOP/s over --nodes nodes (d scaled by the nodes) / one node's"},
}};

inline bool is_acceptance_metric(std::string_view name) {
  for (const auto& m : kAcceptanceMetrics)
    if (m.name == name) return true;
  return false;
}

}  // namespace ptdp
