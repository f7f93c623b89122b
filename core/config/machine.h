// A machine profile: the GPU (or CPU) and its interconnect. Read from
// sweeps/machines/<name>.json; every number there carries a source note.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace ptdp {

struct Link {
  double bandwidth_gbs = 0;  // unidirectional GB/s (1e9 bytes/s) per GPU on this link class
  double latency_us = 0;     // per-message latency in microseconds
};

struct Machine {
  std::string name;                           // profile name, e.g. "a100-80gb"
  std::string gpu;                            // device model, e.g. "NVIDIA A100-SXM4-80GB"
  int gpus_per_node = 1;                      // devices sharing the intra-node link
  std::int64_t memory_bytes = 0;              // device memory per GPU
  double memory_bandwidth_gbs = 0;            // device memory bandwidth, GB/s
  std::map<std::string, double> peak_tflops;  // dense peak per precision ("fp32", "bf16", ...)
  Link intra_node;                            // NVLink/NVSwitch (or shared memory on a CPU)
  Link inter_node;                            // InfiniBand per GPU
  std::map<std::string, std::string> sources; // field name -> where its number comes from

  // Dense peak for a precision name, or 0 when the profile does not give one.
  double peak_for(const std::string& precision) const;
};

}  // namespace ptdp
