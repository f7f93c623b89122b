// libFuzzer target: the readers of results. The input is read as a result
// file (read_result, the library's reader of ptdp.result/2) and as
// the results file a rerun of a sweep resumes (SweepResults, against
// sweeps/cpu_microbatch.json; it takes a path, hence the scratch file).
// A refusal is JsonRefused (read_result turns a config's ConfigRefused into
// one); anything else that escapes is a finding.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "core/config/config.h"  // default_machines_dir
#include "core/config/json_read.h"
#include "core/results/result.h"
#include "core/sweep/sweep_results.h"
#include "fuzz/fuzz_input.h"

namespace {

void read_as_result(const std::string& text) {
  try {
    (void)ptdp::read_result(ptdp::parse_json(text, "fuzz-result"), "fuzz-result");
  } catch (const ptdp::JsonRefused&) {
  }
}

void read_as_resumed_sweep(const std::string& text) {
  using namespace ptdp;
  // Read once: the sweep whose results file the input claims to be.
  static const Sweep sweep = load_sweep(std::filesystem::path(PTDP_SOURCE_DIR) / "sweeps" / "cpu_microbatch.json",
                                        default_machines_dir(), nullptr);
  const fuzz::ScratchFile file("sweep-results", text);
  try {
    const SweepResults resumed(file.path(), sweep);
    (void)resumed.finished("cpu_microbatch#0");
  } catch (const JsonRefused&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = ptdp::fuzz::as_text(data, size);
  read_as_result(text);
  read_as_resumed_sweep(text);
  return 0;
}
