// The CPU's rates measured on this machine (fp32 GEMM TFLOP/s, streaming
// bandwidth) and their cache: one small JSON file per CPU model and core and
// BLAS-thread count in $XDG_CACHE_HOME/ptdp (else ~/.cache/ptdp), so that a
// second run on the machine uses the first run's figures. The measuring is
// core/runtime/peak_at_hand.h's; this file holds the data, its file and its use.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config/json_read.h"
#include "core/config/machine.h"

namespace ptdp {

// The version of the measuring (core/runtime/peak_at_hand.cpp): a cache of
// another version is measured again. 2: the best of a set of GEMM shapes.
inline constexpr int kPeakMethod = 2;

// One measurement of this machine's CPU rates and what it was made on.
struct MeasuredPeak {
  std::string cpu;           // the CPU model ("AMD EPYC 7B13"), as /proc/cpuinfo names it
  int cores = 0;             // logical cores of the host
  int blas_threads = 0;      // threads the BLAS GEMM ran on (OPENBLAS_NUM_THREADS)
  double fp32_tflops = 0;    // the best rate of a fixed square fp32 GEMM through the CPU backend's BLAS
  double bandwidth_gbs = 0;  // the best rate of a streaming triad, bytes read + written
  std::string measured_at;   // UTC, ISO 8601 ("2026-12-01T07:30:00Z")
  bool cached = false;       // read from the cache rather than measured by this run (not written)
  int method = kPeakMethod;  // the measuring's version
};

// The cache file of (cpu, cores, threads) in `dir`: a name made of the model's
// letters and digits and the counts ("peak-AMD-EPYC-7B13-c2-t1.json").
std::filesystem::path peak_cache_file(const std::filesystem::path& dir, const std::string& cpu, int cores,
                                      int blas_threads);

// $XDG_CACHE_HOME/ptdp when set (absolute), else $HOME/.cache/ptdp; empty when neither.
std::filesystem::path peak_cache_dir();

// The peak cached in `file` when it holds one of (cpu, cores, blas_threads)
// measured by kPeakMethod; nothing when it is absent. A file that is not such
// a record (malformed, a rate not positive, another CPU's key, another
// method) is ignored: nothing, with the reason in `warning` naming the file
// and field.
std::optional<MeasuredPeak> read_peak_cache(const std::filesystem::path& file, const std::string& cpu, int cores,
                                            int blas_threads, std::string& warning);

// The best of each rate of `a` and `b` (two measurements of one CPU), with
// the time of the one whose GEMM rate is kept.
MeasuredPeak best_of(const MeasuredPeak& a, const MeasuredPeak& b);

// Writes `p` to `file` through a staged file (the folder is made); throws
// std::runtime_error naming the path when it cannot.
void write_peak_cache(const std::filesystem::path& file, const MeasuredPeak& p);

// The machine at hand's CPU figures replaced by `p`: peak_tflops.fp32,
// memory_bandwidth_gbs and their sources, which say where and when.
void use_measured_peak(Machine& m, const MeasuredPeak& p);

// What the result's hardware.peak says of `p`, and back (JsonRefused naming the pointer).
nlohmann::json to_json(const MeasuredPeak& p);
MeasuredPeak measured_peak_of(const JsonAt& j);  // refused: a field missing or mistyped, a rate not positive

}  // namespace ptdp
