// The benchmark programs' shared timing code (microbench/bench_timing.h): an
// exception in one benchmark's set-up or timed loop is that benchmark's
// recorded error and the others run; inputs are drawn on the backend's device
// with the parameters' Philox initialiser (here the CPU's, element for element).
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/kernels/cpu/cpu_ops.h"
#include "core/tensor/param_init.h"
#include "microbench/bench_timing.h"

namespace ptdp::bench {
namespace {

// Collects each run's name and error, in place of the console.
class Collect : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) errors[r.benchmark_name()] = r.error_occurred ? r.error_message : "";
  }
  std::map<std::string, std::string> errors;
};

TEST(BenchTiming, AnExceptionIsThatBenchmarksErrorAndTheOthersRun) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  Timer timer(ops, 0);
  register_guarded("guard/setup_throws", [](benchmark::State&) { throw std::runtime_error("planted in set-up"); })
      ->Iterations(3);
  register_guarded("guard/loop_throws", [&](benchmark::State& st) {
    int calls = 0;
    timer.run(st, {1, 0, "memory"}, 0, [&] {
      if (++calls == 2) throw std::logic_error("planted in the timed loop");
    });
  })->Iterations(3)->UseManualTime();
  register_guarded("guard/runs", [&](benchmark::State& st) { timer.run(st, {1, 0, "memory"}, 0, [] {}); })
      ->Iterations(3)->UseManualTime();
  Collect collect;
  benchmark::RunSpecifiedBenchmarks(&collect, "^guard/");
  ASSERT_EQ(collect.errors.size(), 3u);
  EXPECT_EQ(collect.errors["guard/setup_throws/iterations:3"], "planted in set-up");
  EXPECT_EQ(collect.errors["guard/loop_throws/iterations:3/manual_time"], "planted in the timed loop");
  EXPECT_EQ(collect.errors["guard/runs/iterations:3/manual_time"], "");
}

TEST(BenchTiming, RandomInputsAreTheParameterInitialisersNormalValues) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  const float scale = 0.5f;
  Tensor t = random_tensor(ops, {256, 300}, scale);
  std::vector<float> got(static_cast<std::size_t>(t.numel()));
  ops.download_f32(t, got.data());
  ParamInit how;
  how.kind = Init::normal, how.std = scale, how.key = philox::Key{{1234u, 0x9e3779b9u}};
  double sum = 0, squares = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], init_element(how, static_cast<std::int64_t>(i))) << i;
    sum += got[i], squares += static_cast<double>(got[i]) * got[i];
  }
  // N(0, scale²) over n = 76800 values: the mean within 5 standard errors
  // (5·scale/√n ≈ 0.009), the variance within 5 of its standard errors (5·√(2/n)·scale² ≈ 0.0064).
  const double n = static_cast<double>(got.size()), mean = sum / n, var = squares / n - mean * mean;
  EXPECT_LT(std::abs(mean), 5 * scale / std::sqrt(n));
  EXPECT_LT(std::abs(var - scale * scale), 5 * std::sqrt(2 / n) * scale * scale);
}

}  // namespace
}  // namespace ptdp::bench
