// Turning Google Benchmark output of ptdp's microbenchmarks into a calibration
// table the cost model reads: GEMM samples by shape ("gemm" runs), the achieved
// bandwidth of memory-bound kernels ("memory" runs, median), the achieved rate
// of fused attention ("flash_attention" runs, mean), and an α–β per collective
// (runs labelled by collective_name, with a "bus_factor" counter) and link class
// (α: the smallest message's time; busbw: the median over the large messages
// (≥ 1 MiB, else within 16× of the largest) of bus bytes / (time − α); the link
// class is intra_node when all ranks of the run share a node).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sim/calibration.h"

namespace ptdp {

// What one benchmark file gave, for the summary a user reads.
struct CalibrationInput {
  std::string file, hardware, precision;
  int gemms = 0, memory = 0, attention = 0, collectives = 0, skipped = 0;
};

// Reads the files (std::runtime_error naming the file and field when one is not
// Google Benchmark JSON) and builds the table for `machine`.
Calibration calibrate(const std::vector<std::filesystem::path>& files, const std::string& machine,
                      std::vector<CalibrationInput>* inputs = nullptr);

}  // namespace ptdp
