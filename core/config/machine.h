// A machine profile: the GPU (or CPU), its memory, its interconnect and how
// efficiently kernels and collectives use them. Read from
// sweeps/machines/<name>.json, where every number carries a source note.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "core/config/acceptance_band.h"
#include "core/config/bounds.h"
#include "core/config/field.h"
#include "core/config/mechanisms.h"
#include "core/tensor/dtype.h"

namespace ptdp {

// Each struct's JSON keys, bounds and meanings: its visit_fields below.
struct Link {
  double bandwidth_gbs = 0;
  double latency_us = 0;
  int nics_per_node = 0;  // 0: one per GPU (Machine::nics_per_node)
};

// What fraction of the datasheet rates kernels and transfers reach. These
// drive the analytical cost model when no calibration table is given.
struct Efficiency {
  double gemm = 0.8;
  double gemm_k_half = 64;
  int gemm_tile_m = 128;
  int gemm_tile_n = 128;
  int sms = 1;
  double memory = 0.8;
  double kernel_launch_us = 5;
  double flash_attention = 0.5;
  double intra_node = 0.75;
  double inter_node = 0.9;
};

// The parallel filesystem checkpoints are saved to and loaded from
// (core/sim/checkpoint_cost.h).
struct Filesystem {
  double write_gbs = 0;
  double read_gbs = 0;
  double nic_gbs_per_node = 0;  // 0: no limit beside the filesystem's
  double write_efficiency = 1;
  double read_efficiency = 1;
};

struct Machine {
  std::string name;
  Device device = Device::cuda;
  std::string gpu;
  int gpus_per_node = 1;
  std::int64_t memory_bytes = 0;  // 0: not checked
  std::int64_t memory_reserved_bytes = 0;
  double memory_bandwidth_gbs = 0;
  std::map<std::string, double> peak_tflops;  // precision name -> dense peak
  Link intra_node;
  Link inter_node;
  Efficiency efficiency;
  std::optional<Filesystem> filesystem;  // absent: unknown
  Mechanisms mechanisms;                 // the cost model's switches: all on (not in JSON; --ablate)
  std::map<std::string, std::string> sources;
  std::map<std::string, AcceptanceBand> acceptance;

  // Dense peak for a precision name, or 0 when the profile does not give one.
  double peak_for(const std::string& precision) const;
  // Network adapters per node (one per GPU when the profile does not say).
  int nics_per_node() const { return inter_node.nics_per_node > 0 ? inter_node.nics_per_node : gpus_per_node; }
};

// The field tables (core/config/field.h), in reading order. Rates in GB/s are 1e9 bytes/s.
template <FieldsOf<Link> M, class Visit>
void visit_fields(M& l, Visit&& v) {
  v({.key = "bandwidth_gbs",
     .description = "unidirectional GB/s: per GPU (intra-node), per network adapter (inter-node)",
     .bound = interval(0, true, kMaxRate, false), .required = true}, l.bandwidth_gbs);
  v({.key = "latency_us", .description = "per-message latency in microseconds",
     .bound = interval(0, false, kMaxLatencyUs, false), .required = true}, l.latency_us);
  v({.key = "nics_per_node", .description = "inter-node only: network adapters per node",
     .bound = count(kMaxSize, "one per GPU"), .written = Written::unless_empty}, l.nics_per_node);
}

template <FieldsOf<Efficiency> M, class Visit>
void visit_fields(M& e, Visit&& v) {
  constexpr Bound kFraction = interval(0, true, 1, false);
  v({.key = "gemm", .description = "large dense GEMM throughput / peak", .bound = kFraction}, e.gemm);
  v({.key = "gemm_k_half", .description = "K at which a GEMM's efficiency halves (K/(K + k_half))",
     .bound = interval(0, false, static_cast<double>(kMaxSize), false)}, e.gemm_k_half);
  v({.key = "gemm_tile_m", .description = "output tile rows of one thread block, for wave quantization over the SMs",
     .bound = count()}, e.gemm_tile_m);
  v({.key = "gemm_tile_n", .description = "output tile columns of one thread block", .bound = count()}, e.gemm_tile_n);
  v({.key = "sms", .description = "streaming multiprocessors (concurrent tiles)", .bound = count()}, e.sms);
  v({.key = "memory", .description = "element-wise kernel bandwidth / datasheet bandwidth", .bound = kFraction},
    e.memory);
  v({.key = "kernel_launch_us", .description = "fixed cost per kernel in microseconds",
     .bound = interval(0, false, kMaxLatencyUs, false)}, e.kernel_launch_us);
  v({.key = "flash_attention", .description = "fused attention throughput / peak", .bound = kFraction},
    e.flash_attention);
  v({.key = "intra_node", .description = "collective bus bandwidth / link bandwidth inside a node", .bound = kFraction},
    e.intra_node);
  v({.key = "inter_node", .description = "achieved / datasheet network adapter bandwidth", .bound = kFraction},
    e.inter_node);
}

template <FieldsOf<Filesystem> M, class Visit>
void visit_fields(M& fs, Visit&& v) {
  v({.key = "write_gbs", .description = "aggregate peak write bandwidth of the whole filesystem",
     .bound = interval(0, true, kMaxRate, false), .required = true}, fs.write_gbs);
  v({.key = "read_gbs", .description = "aggregate peak read bandwidth", .bound = interval(0, true, kMaxRate, false),
     .required = true}, fs.read_gbs);
  v({.key = "nic_gbs_per_node", .description = "what one node can move to or from storage (its storage adapters); "
                                               "0: no limit beside the filesystem's (a local disk)",
     .bound = interval(0, false, kMaxRate, false)}, fs.nic_gbs_per_node);
  v({.key = "write_efficiency", .description = "achieved / peak while a checkpoint is saved",
     .bound = interval(0, true, 1, false)}, fs.write_efficiency);
  v({.key = "read_efficiency", .description = "achieved / peak while one is loaded",
     .bound = interval(0, true, 1, false)}, fs.read_efficiency);
}

template <FieldsOf<Machine> M, class Visit>
void visit_fields(M& m, Visit&& v) {
  v({.key = "name", .description = "profile name, e.g. \"a100-80gb\": a file name of letters, digits, "
                                   "'.', '_' and '-', not starting with '.'", .required = true}, m.name);
  v({.key = "device", .description = "what runs the kernels"}, m.device);
  v({.key = "gpu", .description = "device model, e.g. \"NVIDIA A100-SXM4-80GB\""}, m.gpu);
  v({.key = "gpus_per_node", .description = "devices sharing the intra-node link", .bound = count()}, m.gpus_per_node);
  v({.key = "memory_bytes", .description = "device memory per GPU", .bound = count(kMaxMemoryBytes, "not checked")},
    m.memory_bytes);
  v({.key = "memory_reserved_bytes", .description = "not available to tensors (context, communication buffers): "
                                                    "at least 0 and below memory_bytes"}, m.memory_reserved_bytes);
  v({.key = "memory_bandwidth_gbs", .description = "device memory bandwidth, GB/s",
     .bound = interval(0, true, kMaxRate, false)}, m.memory_bandwidth_gbs);
  v({.key = "peak_tflops", .description = "dense peak TFLOP/s per precision (\"fp32\", \"bf16\", ...); at least one",
     .bound = interval(0, true, kMaxRate, false)}, m.peak_tflops);
  v({.key = "intra_node", .description = "NVLink/NVSwitch (or shared memory on a CPU); its bandwidth must be given"},
    m.intra_node);
  v({.key = "inter_node", .description = "InfiniBand; its bandwidth must be given"}, m.inter_node);
  v({.key = "efficiency", .description = "kernel and link efficiencies"}, m.efficiency);
  v({.key = "filesystem", .description = "checkpoint storage; absent or null: unknown"}, m.filesystem);
  v({.key = "sources", .description = "field name -> where its number comes from; \"measured_on\": the CPU (as "
                                      "/proc/cpuinfo names it) a CPU profile's peak was measured on",
     .written = Written::unless_empty}, m.sources);
  v({.key = "acceptance", .description = "metric -> the band `ptdp accept` holds it to; not written into results",
     .written = Written::never, .keys = kAcceptanceMetrics, .keys_are = "a metric `ptdp accept` measures"},
    m.acceptance);
}

// "cpu" and "cuda", as device_name spells them.
std::span<const std::string_view> spellings(Device);

}  // namespace ptdp
