// libFuzzer target: a machine profile, read as load_machine reads
// sweeps/machines/<name>.json (the strict JSON reader, then
// machine_from_json's validation). Refusals are JsonRefused and
// ConfigRefused; anything else that escapes is a finding.
#include <cstddef>
#include <cstdint>

#include "core/config/config.h"
#include "core/config/json_read.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptdp;
  try {
    const Machine m = machine_from_json(parse_json(fuzz::as_text(data, size), "fuzz-machine"), "machine(fuzz)");
    (void)to_json(m).dump();  // an accepted profile is echoed into every result
  } catch (const JsonRefused&) {
  } catch (const ConfigRefused&) {
  }
  return 0;
}
