// The memory model's bytes of a plan against the device's memory.
#include "endtoend/train_memory.h"

#include <algorithm>
#include <string>

#include "core/accounting/memory_model.h"
#include "core/runtime/backend.h"
#include "core/schedule/registry.h"
#include "core/sim/plan_limits.h"

namespace ptdp::cli {

namespace {

std::string bytes_text(long double bytes) {
  return std::to_string(static_cast<long long>(bytes)) + " bytes (" + gib_text(bytes) + ")";
}

std::string breakdown_text(const MemoryBreakdown& b) {
  return "parameters " + std::to_string(b.params) + ", gradients " + std::to_string(b.grads) + ", optimizer " +
         std::to_string(b.optimizer) + ", activations " + std::to_string(b.activations) + " bytes";
}

}  // namespace

ConfigErrors check_train_memory(const Config& cfg, Device device, int local_rank, Communicator& world) {
  const Plan& p = cfg.plan;
  const auto programs = build_pipeline(p.schedule, p.pp, p.micro_batches(), p.virtual_stages);
  const MemoryTraits traits = memory_traits(device, p.precision, p.attention == Attention::flash);
  const auto stages = memory_per_stage(cfg.model, p, RankDims(cfg.model, p), traits, ActivationFormula::ptdp, programs);
  const auto busiest = std::max_element(stages.begin(), stages.end(), [](const auto& a, const auto& b) {
    return a.total() < b.total();
  });
  long double need = static_cast<long double>(busiest->total());
  std::string whose = "the busiest rank";
  if (device == Device::cpu) {  // every rank of the job shares the host
    need = 0;
    for (const auto& s : stages) need += static_cast<long double>(s.total()) * p.tp * p.dp;
    whose = p.world_size() == 1 ? "the job's one rank" : "the job's " + std::to_string(p.world_size()) + " ranks together";
  }
  const double own = static_cast<double>(device_memory_bytes(device, local_rank));
  const long double have = -world.all_reduce_host(-own, ReduceOp::max);  // the smallest device
  if (have <= 0 || need <= have) return {};
  const std::string device_text = device == Device::cpu ? "this host's memory" : "the GPU's memory";
  return {{"memory", "the plan needs " + bytes_text(need) + " by the memory model for " + whose + " (stage " +
                         std::to_string(busiest - stages.begin()) + ": " + breakdown_text(*busiest) +
                         "), more than the " + bytes_text(have) + " of " + device_text +
                         "; --allow-oversubscribe-memory runs it anyway"}};
}

}  // namespace ptdp::cli
