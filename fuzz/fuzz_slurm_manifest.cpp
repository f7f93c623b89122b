// libFuzzer target: the manifest.json of an --emit-slurm folder as `ptdp sweep
// sweeps/cpu_microbatch.json --collect DIR` reads it (manifest_points against
// that sweep, loaded once). A refusal is JsonRefused, as the command catches
// it; anything else that escapes is a finding.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "core/config/config.h"
#include "core/config/json_read.h"
#include "core/sweep/slurm_folder.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptdp;
  static const Sweep sweep = load_sweep(std::filesystem::path(PTDP_SOURCE_DIR) / "sweeps" / "cpu_microbatch.json",
                                        default_machines_dir(), nullptr);
  try {
    (void)manifest_points(parse_json(fuzz::as_text(data, size), "manifest.json"), "manifest.json", sweep);
  } catch (const JsonRefused&) {
  }
  return 0;
}
