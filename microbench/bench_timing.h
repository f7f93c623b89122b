// Timing one op on a backend for Google Benchmark: before each iteration a
// scratch buffer larger than the caches may be overwritten (outside the timed
// region; on a GPU, whose training working set exceeds its L2), then the op runs between two of the backend's timing marks (CUDA
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
  std::string label; // the op's kind (core/layer_ops/op_kind.h: the key `ptdp calibrate` reads), "part" (a layer,
                     // the embedding or the head) or "optimizer"
  int units = 1;     // copies of the op one run holds (a chunk's layers): time and work are per unit
};

// (shape) in the compute type, values drawn from N(0, scale²) with a fixed
// Philox key, on the backend's device (Ops::init_param, the parameters'
// initialiser): inputs with training's spread. Zeros took data-dependent fast
// paths (tanh(0), exp of equal scores) that training never takes, so the
// benchmark ran faster than training; drawing on the host took minutes at the
// 1.7B shapes (about 7·10⁹ values).
Tensor random_tensor(Ops& ops, Shape shape, float scale = 1.0f);

// Registers `body` as benchmark `name`; any exception from its set-up or its
// timed loop becomes that benchmark's recorded error (SkipWithError), and the
// other benchmarks run, so one failure never ends the program or leaves its
// JSON unterminated.
benchmark::internal::Benchmark* register_guarded(const std::string& name, std::function<void(benchmark::State&)> body);

class Timer {
 public:
  // `flush_bytes`: the scratch overwritten before every iteration; 0: none, the
  // op runs on warm caches, as on the CPU, where training's inputs are the
  // previous op's outputs and the whole model fits the last-level cache.
  Timer(Ops& ops, std::size_t flush_bytes);

  // Runs `op` once per iteration of `state`; sets manual time, label and counters
  // (unfused_fallback = 1 when a fused path fell back: Ops::fallback_runs).
  // An OutOfMemory in `op` becomes SkipWithError.
  void run(benchmark::State& state, const Work& work, double peak_flops, const std::function<void()>& op);

 private:
  Ops& ops_;
  Tensor flush_;
  std::size_t flush_bytes_;
};

}  // namespace ptdp::bench
