// The backend of a run (training, benchmarks): an allocator and ops (CPU fp32, or CUDA
// bf16/fp16 on this rank's GPU) and the communicator the model's groups are
// split from (the host world on the CPU, an NCCL world on GPUs). The one place
// that chooses between them.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/comm/communicator.h"
#include "core/comm/placement.h"
#include "core/config/config.h"
#include "core/config/hardware.h"
#include "core/kernels/ops.h"
#include "core/topology/process_place.h"

namespace ptdp {

struct Backend {
  std::unique_ptr<Allocator> allocator;
  std::unique_ptr<Ops> ops;
  std::unique_ptr<Communicator> device_world;  // null: use the host world
  ProcessPlace place;                          // where this process runs (its GPU: place.local_rank)
  nlohmann::json info;                         // device, versions, for the result
  // The device's own view of memory, beside the tensors' live and peak bytes
  // (-1 where not known: the CPU backend).
  struct DeviceMemory {
    std::int64_t pool_reserved_peak = -1;   // bytes the memory pool held at most (cached included)
    std::int64_t pool_used_peak = -1;       // bytes of the pool in use at most
    std::int64_t device_used_at_peak = -1;  // cudaMemGetInfo when the tensor peak was reached (context included)
  };
  std::function<DeviceMemory()> device_memory = [] { return DeviceMemory{}; };
};

// CUDA devices this process sees (0 without a CUDA build or a GPU).
int cuda_devices();

// Whether `device` can be used by this build, and the reason when not.
std::string device_unavailable(Device device);
// Whether plan.attention can run on `device` in this build ("flash" needs CUDA
// and cuDNN, and cuDNN a head dim that is a multiple of 8 up to 256; head_dim 0:
// not checked), and the reason when not.
std::string attention_unavailable(Device device, Attention attention, std::int64_t head_dim = 0);

// The backend of the process at `place` (on CUDA: the host's GPU place.local_rank).
Backend make_backend(Device device, const Config& cfg, Communicator& host, const ProcessPlace& place,
                     double timeout_s);

// Bytes of memory behind this rank's tensors on `device`, 0 where unknown: the
// GPU make_backend would pick for `local_rank` (CUDA), or the host's RAM (CPU;
// the control group's limit where lower). Allocates nothing.
std::int64_t device_memory_bytes(Device device, int local_rank);

// The hardware the process at `here` runs on: the CPU's model and cores, or
// the GPU it would pick (name, memory), and the ranks per host of `places`.
// Allocates nothing; `profile`, `detected` and `mismatch` are left to the caller.
Hardware detect_hardware(Device device, const std::vector<RankPlace>& places, const ProcessPlace& here);

// Ops of `device` for the plan's precision, fused-operator and attention
// choices, on `alloc` (a CpuAllocator or CUDA allocator of the same device):
// benchmarks compare variants side by side with it.
std::unique_ptr<Ops> make_ops(Device device, const Config& cfg, Allocator& alloc);
// A device allocator for `device` (the stream-ordered pool allocator on CUDA).
std::unique_ptr<Allocator> make_allocator(Device device, int rank);

}  // namespace ptdp
