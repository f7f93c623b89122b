// The memory check of `ptdp train`, before anything is allocated: the plan's
// bytes by the memory model (core/accounting/memory_model.h, ptdp's own tensors,
// the device's element sizes) against the memory of the device they would live on.
#pragma once
#include "core/comm/communicator.h"
#include "core/config/config.h"

namespace ptdp::cli {

// One "memory" error with the numbers when the plan cannot fit: on CUDA the
// busiest pipeline stage against each GPU's memory; on the CPU every rank's
// stage summed against the host's RAM (ptdp runs a CPU job's ranks on one
// host); this rank's GPU is its host's `local_rank`-th. The smallest device of
// the world decides, so every rank agrees: a collective, called by every rank.
// Needs a plan within check_work_limits().
ConfigErrors check_train_memory(const Config& cfg, Device device, int local_rank, Communicator& world);

}  // namespace ptdp::cli
