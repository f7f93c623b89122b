// Measuring the CPU's rates and reading or writing their cache; see peak_at_hand.h.
#include "core/runtime/peak_at_hand.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <vector>

#include "core/kernels/cpu/gemm.h"

namespace ptdp {

namespace {

// The GEMMs timed: (rows, cols, inner) and runs after one warm-up, the best
// rate of all kept. A square 1024³ alone measured 0.091–0.097 TFLOP/s on one
// thread of a 1 MiB-L2 AMD EPYC where the MLP's 256 × 1024 × 256 of the CPU
// configurations (tokens × 4h × h, h = 256) ran at 0.100–0.103: the peak was
// set below what training reached. About 0.1 s on one core.
struct GemmShape {
  std::int64_t rows, cols, inner;
  int runs;
};
constexpr GemmShape kGemms[] = {{1024, 1024, 1024, 4}, {1024, 1024, 256, 8}, {256, 1024, 256, 16}};
constexpr std::size_t kTriadFloats = 16 << 20;  // 64 MiB an array: past any last-level cache
constexpr int kTriadRuns = 4;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The best rate of y(rows, cols) = x(rows, inner) · w(cols, inner)ᵀ over kGemms, TFLOP/s.
double best_gemm_tflops() {
  double best = 0;
  for (const GemmShape& g : kGemms) {
    std::vector<float> x(static_cast<std::size_t>(g.rows * g.inner), 0.5f);
    std::vector<float> w(static_cast<std::size_t>(g.cols * g.inner), 0.25f);
    std::vector<float> y(static_cast<std::size_t>(g.rows * g.cols));
    const double flops = 2.0 * static_cast<double>(g.rows) * static_cast<double>(g.cols) * static_cast<double>(g.inner);
    for (int run = 0; run <= g.runs; ++run) {
      const auto start = std::chrono::steady_clock::now();
      cpu::gemm<float>(false, true, g.rows, g.cols, g.inner, 1.0f, x.data(), g.inner, w.data(), g.inner, 0.0f,
                       y.data(), g.cols);
      const double s = seconds_since(start);
      if (run > 0 && s > 0) best = std::max(best, flops / s / 1e12);
    }
  }
  return best;
}

// The best rate of a[i] = b[i] + 3·c[i], GB/s of bytes read and written.
double best_triad_gbs() {
  std::vector<float> a(kTriadFloats), b(kTriadFloats, 1.0f), c(kTriadFloats, 2.0f);
  double best = 0;
  for (int run = 0; run <= kTriadRuns; ++run) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < kTriadFloats; ++i) a[i] = b[i] + 3.0f * c[i];
    const double s = seconds_since(start);
    b[run] = a[run];  // a later run reads what this one wrote: the loop is not dropped
    if (run > 0 && s > 0) best = std::max(best, 3.0 * static_cast<double>(sizeof(float) * kTriadFloats) / s / 1e9);
  }
  return best;
}

std::string measured_now_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace

std::optional<PeakSetting> peak_setting(const char* value) {
  if (value == nullptr || std::strcmp(value, "1") == 0) return PeakSetting::measured;
  if (std::strcmp(value, "0") == 0) return PeakSetting::profile;
  if (std::strcmp(value, "again") == 0) return PeakSetting::again;
  return std::nullopt;
}

MeasuredPeak measure_cpu_peak(const std::string& cpu, int cores) {
  MeasuredPeak p;
  p.cpu = cpu;
  p.cores = cores;
  p.blas_threads = openblas_get_num_threads();
  p.fp32_tflops = best_gemm_tflops();
  p.bandwidth_gbs = best_triad_gbs();
  p.measured_at = measured_now_utc();
  return p;
}

MeasuredPeak cpu_peak_at_hand(const Hardware& hw, Communicator& world, PeakSetting setting,
                              std::vector<std::string>& warnings) {
  const bool root = world.rank() == 0;
  const int threads = openblas_get_num_threads();
  const std::filesystem::path dir = peak_cache_dir();
  const std::filesystem::path file = dir.empty() ? dir : peak_cache_file(dir, hw.name, hw.cores, threads);
  std::string warning;
  std::optional<MeasuredPeak> cached;
  if (root && !file.empty()) cached = read_peak_cache(file, hw.name, hw.cores, threads, warning);
  if (!warning.empty()) warnings.push_back(warning);
  if (setting != PeakSetting::again && world.all_reduce_host(cached ? 1.0 : 0.0, ReduceOp::max) > 0) {
    MeasuredPeak p = cached.value_or(MeasuredPeak{hw.name, hw.cores, threads, 0, 0, "", true});
    p.fp32_tflops = world.all_reduce_host(p.fp32_tflops, ReduceOp::max);  // rank 0's, the others' being 0
    p.bandwidth_gbs = world.all_reduce_host(p.bandwidth_gbs, ReduceOp::max);
    return p;
  }
  MeasuredPeak p = measure_cpu_peak(hw.name, hw.cores);
  p.fp32_tflops = world.all_reduce_host(p.fp32_tflops, ReduceOp::max);
  p.bandwidth_gbs = world.all_reduce_host(p.bandwidth_gbs, ReduceOp::max);
  if (cached) p = best_of(p, *cached);  // again: rank 0 alone holds the cache, and alone writes it
  p.fp32_tflops = world.all_reduce_host(root ? p.fp32_tflops : 0.0, ReduceOp::max);
  p.bandwidth_gbs = world.all_reduce_host(root ? p.bandwidth_gbs : 0.0, ReduceOp::max);
  if (!root) return p;
  if (file.empty()) {
    warnings.push_back("the measured CPU peak is not cached: neither XDG_CACHE_HOME nor HOME is set");
    return p;
  }
  try {
    write_peak_cache(file, p);
  } catch (const std::exception& e) {
    warnings.push_back(std::string("the measured CPU peak is not cached: ") + e.what());
  }
  return p;
}

}  // namespace ptdp
