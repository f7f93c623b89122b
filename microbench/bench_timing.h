// Timing one op on a backend for Google Benchmark: before each iteration a
// scratch buffer larger than the caches is overwritten (outside the timed
// region), then the op runs between two of the backend's timing marks (CUDA
// events on a GPU, the host clock on the CPU) and the mark-to-mark time is the
// iteration's manual time. Counters: TFLOP/s, GB/s, percent of the peak.
#pragma once
#include <benchmark/benchmark.h>

#include <functional>
#include <string>

#include "core/kernels/ops.h"

namespace ptdp::bench {

struct Work {
  double flops = 0;  // per iteration
  double bytes = 0;  // moved per iteration
  std::string label; // "gemm", "memory", "attention", "flash_attention", "optimizer", "layer"
};

class Timer {
 public:
  // `flush_bytes`: the scratch overwritten before every iteration.
  Timer(Ops& ops, std::size_t flush_bytes);

  // Runs `op` once per iteration of `state`; sets manual time, label and counters.
  // An OutOfMemory in setup or in `op` becomes SkipWithError.
  void run(benchmark::State& state, const Work& work, double peak_flops, const std::function<void()>& op);

 private:
  Ops& ops_;
  Tensor flush_;
};

}  // namespace ptdp::bench
