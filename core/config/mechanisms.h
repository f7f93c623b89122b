// The projection's modelled mechanisms as switches. Every profile runs with all
// of them on; `ptdp validate --ablate` turns one off at a time to show what each
// earns against the paper (docs/projection.md lists each with its source). A
// switch is a property of the cost model, never of one experiment.
#pragma once
#include <string>
#include <vector>

namespace ptdp {

struct Mechanisms {
  bool wave_quantization = true;       // GEMM tiles run in waves over the SMs
  bool short_reduction = true;         // GEMM efficiency k/(k + k_half)
  bool memory_bound_gemm = true;       // a GEMM is no faster than its bytes (attention's k = h/a)
  bool kernel_launch = true;           // fixed cost per kernel
  bool tensor_parallel_comm = true;    // the layer's all-reduces (or all-gather + reduce-scatter)
  bool adapter_sharing = true;         // a node's ranks share its network adapters
  bool pipeline_comm = true;           // boundary activations between stages
  bool fp32_grad_accumulation = true;  // 2021's separate pass adding 16-bit gradients into fp32
  bool data_parallel_comm = true;      // gradient all-reduce after the flush, not overlapped (2021)
  bool optimizer_step = true;          // memory-bound passes of the mixed-precision step
};

// One switch by name, for the ablation: its name and the member it clears.
struct MechanismSwitch {
  std::string name;
  bool Mechanisms::*flag;
};

inline std::vector<MechanismSwitch> mechanism_switches() {
  return {{"wave_quantization", &Mechanisms::wave_quantization},
          {"short_reduction", &Mechanisms::short_reduction},
          {"memory_bound_gemm", &Mechanisms::memory_bound_gemm},
          {"kernel_launch", &Mechanisms::kernel_launch},
          {"tensor_parallel_comm", &Mechanisms::tensor_parallel_comm},
          {"adapter_sharing", &Mechanisms::adapter_sharing},
          {"pipeline_comm", &Mechanisms::pipeline_comm},
          {"fp32_grad_accumulation", &Mechanisms::fp32_grad_accumulation},
          {"data_parallel_comm", &Mechanisms::data_parallel_comm},
          {"optimizer_step", &Mechanisms::optimizer_step}};
}

}  // namespace ptdp
