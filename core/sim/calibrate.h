// Turning Google Benchmark output of ptdp's microbenchmarks into a calibration
// table the cost model reads. Each run says what it timed by its label: an op
// kind (core/layer_ops/op_kind.h; the kernel benchmarks label every op with its
// record's kind) or a collective (collective_name). By how the cost model prices
// the kind: GEMM samples by shape (counters m, n, k, batch), the bandwidth the
// memory-bound ops achieve together (their bytes over their time: a median
// swung with which ops the layer's records hold, by a quarter on the CPU), the
// achieved rate of fused attention (flash 1: counter flops, mean)
// and the unfused attention core with fused ops (fused_ops 1: its batched GEMMs,
// sizes b, s, heads, d); fused ops and the model's parts give none. An α–β per
// collective (runs with a "bus_factor" counter) and link class (α: the smallest
// message's time; busbw: the median over the large messages (≥ 1 MiB, else
// within 16× of the largest) of bus bytes / (time − α); the link class is
// intra_node when all ranks of the run share a node). Each benchmark counts by
// its fastest run over repetitions and files (files of repeated attempts
// accumulate). A kernel file whose context says ptdp_concurrent N > 1 (N copies
// ran at once on one host) gives no samples, only host_sharing[N]: the median of
// its times over a lone run's.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/json_read.h"
#include "core/sim/calibration.h"

namespace ptdp {

// Google Benchmark JSON (a bare NaN or infinity read as null), named `source`;
// std::runtime_error naming it when it is no document with a "benchmarks" list.
nlohmann::json parse_benchmark_json(const std::string& text, const std::string& source);
// The same, of `file`.
nlohmann::json read_benchmark_json(const std::filesystem::path& file);
// A benchmark run's real time in seconds: its "real_time" in its "time_unit"
// (ns, us, ms or s). JsonRefused naming the field for another unit, or a time
// that is not finite, positive and normal in seconds, or above kMaxSeconds.
double benchmark_seconds(const JsonAt& run);
double benchmark_seconds(const nlohmann::json& run);

// One parsed benchmark file and its name (for refusals).
struct BenchmarkFile {
  std::string name;
  nlohmann::json doc;
};

// The table of `machine` from the files. Each must have been run for that
// machine (context ptdp_machine) and hold benchmark runs; every time and
// counter used must be finite, positive and normal, within bounds. Refusals
// (JsonRefused, or std::runtime_error) name the file and the field; the table
// built must pass Calibration::from_json, as `ptdp project` reads it.
Calibration calibrate(const std::vector<BenchmarkFile>& files, const std::string& machine);
// Reads the files first (read_benchmark_json).
Calibration calibrate(const std::vector<std::filesystem::path>& files, const std::string& machine);

}  // namespace ptdp
