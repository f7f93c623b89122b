// libFuzzer target: a Google Benchmark file as `ptdp calibrate --machine
// cpu-host` reads it (parse_benchmark_json: a bare NaN read as null), then the
// calibration table built from it, written as JSON. A refusal is what the
// command catches, std::runtime_error (JsonRefused naming the file and field);
// anything else that escapes is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "core/sim/calibrate.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptdp;
  try {
    const std::vector<BenchmarkFile> files = {{"BENCH", parse_benchmark_json(fuzz::as_text(data, size), "BENCH")}};
    (void)calibrate(files, "cpu-host").to_json().dump();  // what `ptdp calibrate --out` writes
  } catch (const std::runtime_error&) {
  }
  return 0;
}
