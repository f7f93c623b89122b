// The timed loop and its counters.
#include "microbench/bench_timing.h"

#include <random>
#include <vector>

namespace ptdp::bench {

Tensor random_tensor(Ops& ops, Shape shape, float scale) {
  Tensor t = ops.empty(std::move(shape));
  std::vector<float> host(static_cast<std::size_t>(t.numel()));
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, scale);
  for (float& v : host) v = normal(rng);
  ops.upload_f32(host.data(), t);
  return t;
}

Timer::Timer(Ops& ops, std::size_t flush_bytes)
    : ops_(ops), flush_(ops.empty({static_cast<std::int64_t>(flush_bytes / 4)}, DType::f32)), flush_bytes_(flush_bytes) {}

void Timer::run(benchmark::State& state, const Work& work, double peak_flops, const std::function<void()>& op) {
  try {
    op();  // warm-up: algorithm selection, caches of the allocator
    ops_.synchronize();
    for (auto _ : state) {
      if (flush_bytes_ > 0) ops_.zero(flush_);
      ops_.reset_marks(2);
      ops_.record_mark(0);
      op();
      ops_.record_mark(1);
      ops_.synchronize();
      state.SetIterationTime(ops_.mark_seconds(1) / work.units);
    }
  } catch (const OutOfMemory& e) {
    state.SkipWithError(e.what());
    return;
  }
  using benchmark::Counter;
  state.SetLabel(work.label);
  if (work.flops > 0) {
    state.counters["TFLOP/s"] = Counter(work.flops / 1e12, Counter::kIsIterationInvariantRate);
    if (peak_flops > 0) state.counters["pct_peak"] = Counter(100 * work.flops / peak_flops, Counter::kIsIterationInvariantRate);
    state.counters["flops"] = work.flops;
  }
  if (work.bytes > 0) {
    state.counters["GB/s"] = Counter(work.bytes / 1e9, Counter::kIsIterationInvariantRate);
    state.counters["bytes"] = work.bytes;
  }
}

}  // namespace ptdp::bench
