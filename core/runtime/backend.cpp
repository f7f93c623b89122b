// CPU and CUDA backends of `ptdp train`.
#include "core/runtime/backend.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <thread>

#include "core/kernels/cpu/cpu_ops.h"
#ifdef PTDP_HAVE_NCCL
#include "core/comm/nccl_communicator.h"
#include "core/kernels/cuda/cuda_ops.h"
#endif

namespace ptdp {

namespace {

Backend cpu_backend(Communicator& host) {
  Backend b;
  b.allocator = std::make_unique<CpuAllocator>(host.rank());
  b.ops = std::make_unique<CpuOps>(*b.allocator);
  b.info = {{"device", "cpu"}, {"backend", b.ops->name()}};
  return b;
}

#ifdef PTDP_HAVE_NCCL
Backend cuda_backend(const Config& cfg, Communicator& host, const ProcessPlace& place, double timeout_s) {
  Backend b;
  b.place = place;
  const int device = select_cuda_device(place.local_rank);
  auto alloc = std::make_unique<CudaPoolAllocator>(host.rank(), timeout_s);
  CudaPoolAllocator* raw = alloc.get();
  auto ops = std::make_unique<CudaOps>(*alloc, cuda_ops_options(cfg.plan, timeout_s));
  b.device_world = NcclCommunicator::create_world(host.split(0, host.rank()), ops->stream(), timeout_s);
  const CudaDeviceInfo d = cuda_device_info();
  b.info = {{"device", "cuda"},          {"backend", ops->name()},  {"gpu", d.name},
            {"gpus_on_node", d.devices}, {"gpu_index", device},      {"gpu_memory_bytes", d.memory_bytes},
            {"driver", d.driver},        {"cuda_runtime", d.runtime}, {"cublaslt", d.cublaslt},
            {"nccl", NcclCommunicator::nccl_version()}};
  b.device_memory = [raw] {
    return Backend::DeviceMemory{raw->reserved_peak_bytes(), raw->used_peak_bytes(), raw->device_used_at_peak()};
  };
  b.allocator = std::move(alloc);
  b.ops = std::move(ops);
  return b;
}
#endif

}  // namespace

namespace {
// The memory limit of this process's control group (v2, then v1), 0 when none.
std::int64_t cgroup_memory_limit() {
  for (const char* file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(file);
    long long limit = 0;
    if (in >> limit && limit > 0) return limit;  // "max" (no limit) does not parse
  }
  return 0;
}
}  // namespace

std::int64_t device_memory_bytes(Device device, int local_rank) {
  if (device == Device::cuda) {
#ifdef PTDP_HAVE_NCCL
    return cuda_device_memory_bytes(local_rank);
#else
    (void)local_rank;
    return 0;
#endif
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const std::int64_t ram = pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page : 0;
  const std::int64_t limit = cgroup_memory_limit();
  return limit > 0 && (ram == 0 || limit < ram) ? limit : ram;
}

namespace {
// The CPU's model name from /proc/cpuinfo ("AMD EPYC 7B13"), "unknown CPU" elsewhere.
std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (line.rfind("model name", 0) == 0 && colon != std::string::npos)
      return line.substr(line.find_first_not_of(" \t", colon + 1));
  }
  return "unknown CPU";
}
}  // namespace

Hardware detect_hardware(Device device, const std::vector<RankPlace>& places, const ProcessPlace& here) {
  Hardware hw;
  hw.device = device;
  hw.ranks_per_host = ranks_per_host(places);
  std::set<std::string> hosts;
  for (const RankPlace& p : places) hosts.insert(p.host);
  hw.hosts = std::max<int>(1, static_cast<int>(hosts.size()));
  hw.cores = static_cast<int>(std::thread::hardware_concurrency());
  hw.memory_bytes = device_memory_bytes(device, here.local_rank);
  hw.name = cpu_model_name();
#ifdef PTDP_HAVE_NCCL
  if (device == Device::cuda) hw.name = cuda_device_name(here.local_rank);
#endif
  return hw;
}

int cuda_devices() {
#ifdef PTDP_HAVE_NCCL
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
#else
  return 0;
#endif
}

std::string device_unavailable(Device device) {
#ifdef PTDP_HAVE_NCCL
  (void)device;
  return "";
#else
  if (device == Device::cpu) return "";
  return "this build has no CUDA backend (CUDA and NCCL were not found at configure time)";
#endif
}

std::string attention_unavailable(Device device, Attention attention, std::int64_t head_dim) {
  if (attention != Attention::flash) return "";
  if (device == Device::cpu) return "plan.attention=\"flash\" needs --device cuda; the CPU backend runs the unfused path";
#ifndef PTDP_HAVE_CUDNN
  if (device == Device::cuda)
    return "plan.attention=\"flash\" runs cuDNN's fused attention, and this build has no cuDNN (install cuDNN and "
           "run scripts/setup.sh for its frontend, then reconfigure; or set \"attention\": \"unfused\")";
#endif
  if (head_dim != 0 && (head_dim % 8 != 0 || head_dim > 256))
    return "plan.attention=\"flash\" runs cuDNN's fused attention, which needs a head dim (model.hidden / "
           "model.heads) that is a multiple of 8 and at most 256, not " + std::to_string(head_dim) +
           " (or set \"attention\": \"unfused\")";
  return "";
}

std::unique_ptr<Allocator> make_allocator(Device device, int rank) {
#ifdef PTDP_HAVE_NCCL
  if (device == Device::cuda) return std::make_unique<CudaPoolAllocator>(rank);
#endif
  (void)device;
  return std::make_unique<CpuAllocator>(rank);
}

std::unique_ptr<Ops> make_ops(Device device, const Config& cfg, Allocator& alloc) {
#ifdef PTDP_HAVE_NCCL
  if (device == Device::cuda) {
    return std::make_unique<CudaOps>(static_cast<CudaPoolAllocator&>(alloc), cuda_ops_options(cfg.plan, 60));
  }
#endif
  (void)device, (void)cfg;
  return std::make_unique<CpuOps>(alloc);
}

Backend make_backend(Device device, const Config& cfg, Communicator& host, const ProcessPlace& place,
                     double timeout_s) {
#ifdef PTDP_HAVE_NCCL
  if (device == Device::cuda) return cuda_backend(cfg, host, place, timeout_s);
#endif
  (void)device, (void)cfg, (void)timeout_s;
  Backend b = cpu_backend(host);
  b.place = place;
  return b;
}

}  // namespace ptdp
