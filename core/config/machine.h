// A machine profile: the GPU (or CPU), its memory, its interconnect and how
// efficiently kernels and collectives use them. Read from
// sweeps/machines/<name>.json, where every number carries a source note.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/config/acceptance_band.h"
#include "core/config/mechanisms.h"
#include "core/tensor/dtype.h"

namespace ptdp {

struct Link {
  double bandwidth_gbs = 0;  // unidirectional GB/s (1e9 bytes/s): per GPU (intra-node), per NIC (inter-node)
  double latency_us = 0;     // per-message latency in microseconds
  int nics_per_node = 0;     // inter-node only: network adapters per node (0: one per GPU)
};

// What fraction of the datasheet rates kernels and transfers reach. These
// drive the analytical cost model when no calibration table is given.
struct Efficiency {
  double gemm = 0.8;          // large dense GEMM throughput / peak
  double gemm_k_half = 64;    // K at which a GEMM's efficiency halves (K/(K + k_half))
  int gemm_tile_m = 128;      // output tile rows and columns of one thread block,
  int gemm_tile_n = 128;      //   for wave quantization over the SMs
  int sms = 1;                // streaming multiprocessors (concurrent tiles)
  double memory = 0.8;        // element-wise kernel bandwidth / datasheet bandwidth
  double kernel_launch_us = 5;  // fixed cost per kernel
  double flash_attention = 0.5; // fused attention throughput / peak
  double intra_node = 0.75;   // collective bus bandwidth / link bandwidth inside a node
  double inter_node = 0.9;    // achieved / datasheet NIC bandwidth
};

// The parallel filesystem checkpoints are saved to and loaded from
// (core/sim/checkpoint_cost.h). Rates in GB/s (1e9 bytes/s).
struct Filesystem {
  double write_gbs = 0;         // aggregate peak write bandwidth of the whole filesystem
  double read_gbs = 0;          // aggregate peak read bandwidth
  double nic_gbs_per_node = 0;  // what one node can move to or from storage (its storage NICs); 0: no limit
                                //   beside the filesystem's (a local disk)
  double write_efficiency = 1;  // achieved / peak while a checkpoint is saved
  double read_efficiency = 1;   // achieved / peak while one is loaded
};

struct Machine {
  std::string name;                           // profile name, e.g. "a100-80gb"
  Device device = Device::cuda;               // what runs the kernels: "cpu" or "cuda" in JSON
  std::string gpu;                            // device model, e.g. "NVIDIA A100-SXM4-80GB"
  int gpus_per_node = 1;                      // devices sharing the intra-node link
  std::int64_t memory_bytes = 0;              // device memory per GPU
  std::int64_t memory_reserved_bytes = 0;     // not available to tensors (context, communication buffers)
  double memory_bandwidth_gbs = 0;            // device memory bandwidth, GB/s
  std::map<std::string, double> peak_tflops;  // dense peak per precision ("fp32", "bf16", ...)
  Link intra_node;                            // NVLink/NVSwitch (or shared memory on a CPU)
  Link inter_node;                            // InfiniBand
  Efficiency efficiency;                      // kernel and link efficiencies
  std::optional<Filesystem> filesystem;       // checkpoint storage; absent or null: unknown
  Mechanisms mechanisms;                      // the cost model's switches: all on (not in JSON; --ablate)
  std::map<std::string, std::string> sources; // field name -> where its number comes from
  std::map<std::string, AcceptanceBand> acceptance;  // metric -> band (`ptdp accept`); not written into results

  // Dense peak for a precision name, or 0 when the profile does not give one.
  double peak_for(const std::string& precision) const;
  // Network adapters per node (one per GPU when the profile does not say).
  int nics_per_node() const { return inter_node.nics_per_node > 0 ? inter_node.nics_per_node : gpus_per_node; }
};

}  // namespace ptdp
