// Turning Google Benchmark output of ptdp's microbenchmarks into a calibration
// table the cost model reads: GEMM samples by shape ("gemm" runs), the achieved
// bandwidth of memory-bound kernels ("memory" runs, median), the achieved rate
// of fused attention ("flash_attention" runs, mean), and an α–β per collective
// (runs labelled by collective_name, with a "bus_factor" counter) and link class
// (α: the smallest message's time; busbw: the median over the large messages
// (≥ 1 MiB, else within 16× of the largest) of bus bytes / (time − α); the link
// class is intra_node when all ranks of the run share a node). Each benchmark
// counts by its fastest run over repetitions and files (files of repeated
// attempts accumulate). A kernel file whose context says
// ptdp_concurrent N > 1 (N copies ran at once on one host) gives no samples,
// only host_sharing[N]: the median of its times over a lone run's.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sim/calibration.h"

namespace ptdp {

// The Google Benchmark JSON of `file` (a bare NaN read as null); std::runtime_error
// naming the file when it is not such a document.
nlohmann::json read_benchmark_json(const std::filesystem::path& file);
// A benchmark run's real time in seconds (its "real_time" in its "time_unit").
double benchmark_seconds(const nlohmann::json& run);

// Reads the files (std::runtime_error naming the file and field when one is not
// Google Benchmark JSON) and builds the table for `machine`.
Calibration calibrate(const std::vector<std::filesystem::path>& files, const std::string& machine);

}  // namespace ptdp
