// The ranks a measured point may use, and the reason when it needs more.
#include "core/launch/rank_limits.h"

#include "core/config/number_text.h"

namespace ptdp {

std::optional<int> allocation_ranks(const char* slurm_ntasks) {
  if (slurm_ntasks == nullptr) return std::nullopt;
  const std::optional<std::int64_t> n = read_integer(slurm_ntasks);
  if (!n || *n <= 0 || *n > 1 << 24) return std::nullopt;
  return static_cast<int>(*n);
}

std::string measure_refusal(const Config& config, const RankLimits& limits) {
  const int ranks = config.plan.world_size();
  const std::string needs = "needs " + std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") + ", more than ";
  const bool gpu = config.machine.device != Device::cpu;
  if (gpu && config.plan.precision == Precision::fp32)
    return "fp32 points are not measured on GPUs (ptdp trains GPUs in bf16 or fp16); it is projected instead";
  if (limits.allocation && ranks > *limits.allocation)
    return needs + "the allocation's " + std::to_string(*limits.allocation) + " tasks (SLURM_NTASKS)";
  if (limits.max_ranks && ranks > *limits.max_ranks) return needs + "--max-ranks " + std::to_string(*limits.max_ranks);
  if (!gpu && !limits.max_ranks && !limits.allocation && ranks > kDefaultMaxCpuRanks)
    return needs + "the " + std::to_string(kDefaultMaxCpuRanks) + " CPU ranks measured without --max-ranks";
  if (gpu && !limits.spans_nodes && ranks > limits.local_gpus)
    return needs + "this machine's " + std::to_string(limits.local_gpus) +
           " GPUs (the mpirun launcher starts ranks here only; --launcher srun or a template spans nodes)";
  return "";
}

}  // namespace ptdp
