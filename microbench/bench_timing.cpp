// The timed loop and its counters.
#include "microbench/bench_timing.h"

#include <exception>
#include <utility>

#include "core/tensor/param_init.h"

#ifdef PTDP_HAVE_CUDA
#include <nvtx3/nvToolsExt.h>  // header-only; a no-op unless a profiler is attached
#endif

namespace ptdp::bench {

namespace {

// The timed op inside an NVTX range "ptdp_timed": Nsight Compute profiles only
// the kernels of timed iterations (ncu --nvtx --nvtx-include "ptdp_timed/"),
// not the warm-up, the inputs' initialisation or cuBLASLt's candidate timing.
void timed_range(bool open) {
#ifdef PTDP_HAVE_CUDA
  if (open) nvtxRangePushA("ptdp_timed");
  else nvtxRangePop();
#else
  (void)open;
#endif
}

}  // namespace

Tensor random_tensor(Ops& ops, Shape shape, float scale) {
  Tensor t = ops.empty(std::move(shape));
  ParamInit how;
  how.kind = Init::normal, how.std = scale, how.key = philox::Key{{1234u, 0x9e3779b9u}};
  ops.init_param(t, how);  // on the backend's own device: a GPU draws 10⁹ values in milliseconds
  return t;
}

benchmark::internal::Benchmark* register_guarded(const std::string& name, std::function<void(benchmark::State&)> body) {
  return benchmark::RegisterBenchmark(name.c_str(), [body = std::move(body)](benchmark::State& st) {
    try {
      body(st);
    } catch (const std::exception& e) {
      st.SkipWithError(e.what());
    } catch (...) {
      st.SkipWithError("an exception of unknown type");
    }
  });
}

Timer::Timer(Ops& ops, std::size_t flush_bytes)
    : ops_(ops), flush_(ops.empty({static_cast<std::int64_t>(flush_bytes / 4)}, DType::f32)), flush_bytes_(flush_bytes) {}

void Timer::run(benchmark::State& state, const Work& work, double peak_flops, const std::function<void()>& op) {
  const std::size_t fallbacks_before = ops_.fallback_runs();
  try {
    op();  // warm-up: algorithm selection, caches of the allocator
    ops_.synchronize();
    for (auto _ : state) {
      if (flush_bytes_ > 0) ops_.zero(flush_);
      ops_.reset_marks(2);
      timed_range(true);
      ops_.record_mark(0);
      op();
      ops_.record_mark(1);
      timed_range(false);
      ops_.synchronize();
      state.SetIterationTime(ops_.mark_seconds(1) / work.units);
    }
  } catch (const OutOfMemory& e) {
    state.SkipWithError(e.what());
    return;
  }
  using benchmark::Counter;
  state.SetLabel(work.label);
  // 1: a fused path this op asked for was unavailable at its shape and the
  // unfused composition was timed instead (the backend's log names the shape).
  if (ops_.fallback_runs() != fallbacks_before) state.counters["unfused_fallback"] = 1;
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
