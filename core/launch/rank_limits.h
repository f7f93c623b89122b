// Whether a measured point's ranks can be started here: the one rule the sweep
// runner (`ptdp sweep`) and the Slurm emitter (`--emit-slurm`) both apply, so a
// point that cannot start is recorded as refused, naming the limit, instead of
// failing half-way through a launch.
#pragma once
#include <optional>
#include <string>

#include "core/config/config.h"

namespace ptdp {

// What bounds the ranks of one measured point.
struct RankLimits {
  std::optional<int> max_ranks;   // --max-ranks, when given
  std::optional<int> allocation;  // tasks of the Slurm allocation this runs in (SLURM_NTASKS), when inside one
  int local_gpus = 0;             // CUDA devices of this machine
  bool spans_nodes = false;       // the launcher starts ranks beyond this machine (srun, a template)
};

// Ranks a CPU point may use when neither --max-ranks nor an allocation says.
inline constexpr int kDefaultMaxCpuRanks = 8;

// SLURM_NTASKS's value as a rank count: a positive integer, else nothing
// (unset outside an allocation; anything else is not Slurm's and is ignored).
std::optional<int> allocation_ranks(const char* slurm_ntasks);

// "" when `config` (a valid point) can be measured within `limits`, else why
// not, naming the limit ("needs 16 ranks, more than the allocation's 8 tasks
// (SLURM_NTASKS)"). Every point is held to --max-ranks and the allocation;
// with neither, a CPU point to kDefaultMaxCpuRanks. A GPU point must be
// 16-bit, and with a launcher that stays on this machine (the mpirun preset
// outside an allocation) fit its GPUs.
std::string measure_refusal(const Config& config, const RankLimits& limits);

}  // namespace ptdp
