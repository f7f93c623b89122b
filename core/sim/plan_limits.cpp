// The work bounds of a plan: int ranges, memory-model counts, instructions.
#include "core/sim/plan_limits.h"

#include <cstdio>
#include <limits>

#include "core/accounting/memory_model.h"
#include "core/schedule/registry.h"

namespace ptdp {

namespace {

constexpr long double kIntMax = std::numeric_limits<int>::max();

// The derived sizes Model and Plan compute in int.
void check_int_ranges(const Model& m, const Plan& p, ConfigErrors& e) {
  const long double pad = m.vocab_pad_to > 1 ? m.vocab_pad_to : 1;
  if (static_cast<long double>(m.vocab) + pad - 1 > kIntMax)
    e.push_back({"model.vocab", "model.vocab=" + std::to_string(m.vocab) + " padded to a multiple of " +
                                    std::to_string(m.vocab_pad_to) + " exceeds 2^31-1"});
  if (m.ffn_hidden == 0 && 4.0L * m.hidden > kIntMax)
    e.push_back({"model.hidden", "4·model.hidden (the MLP size when model.ffn_hidden is 0) = " +
                                     std::to_string(4LL * m.hidden) + " exceeds 2^31-1"});
  if (static_cast<long double>(p.tp) * p.pp * p.dp > kIntMax)
    e.push_back({"plan.tp·plan.pp·plan.dp", "plan.tp·plan.pp·plan.dp = " + std::to_string(1LL * p.tp * p.pp * p.dp) +
                                                " ranks exceeds 2^31-1"});
}

void check_memory_counts(const Model& m, const Plan& p, ConfigErrors& e) {
  const long double bound = memory_model_bound(m, p);
  if (bound <= kMaxModelBytes) return;
  char text[64];
  std::snprintf(text, sizeof text, "%.3Lg", bound);
  e.push_back({"memory", std::string("the plan's sizes multiply to up to ") + text +
                             " bytes of parameters, state and activations, beyond the 2^62 bytes (" +
                             gib_text(kMaxModelBytes) + ") that ptdp's memory model counts; no device holds it"});
}

void check_instructions(const Plan& p, ConfigErrors& e) {
  const std::int64_t m = micro_batches64(p);
  const std::int64_t n = pipeline_instruction_bound(p.pp, m, p.virtual_stages);
  if (n <= kMaxPipelineInstructions) return;
  e.push_back({"plan.pp·plan.virtual_stages·m",
               "one pipeline's instruction lists hold up to " + std::to_string(n) + " instructions (p·(6·m·v + 3) with p=" +
                   std::to_string(p.pp) + ", m=B/(b·d)=" + std::to_string(m) + ", v=" + std::to_string(p.virtual_stages) +
                   "), more than the " + std::to_string(kMaxPipelineInstructions) +
                   " that ptdp runs or simulates (kMaxPipelineInstructions); use fewer micro-batches or stages"});
}

}  // namespace

std::int64_t micro_batches64(const Plan& p) {
  const std::int64_t per_step = static_cast<std::int64_t>(p.micro_batch) * p.dp;
  return per_step > 0 ? p.global_batch / per_step : 0;
}

ConfigErrors check_work_limits(const Model& m, const Plan& p) {
  ConfigErrors e;
  check_int_ranges(m, p, e);
  check_memory_counts(m, p, e);
  check_instructions(p, e);
  return e;
}

std::string gib_text(long double bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3Lg GiB", bytes / (1024.0L * 1024 * 1024));
  return text;
}

}  // namespace ptdp
