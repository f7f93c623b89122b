// libFuzzer target: a run config, read as `ptdp train/project --config` reads
// it (the strict JSON reader, config_from_json, validate). A refusal is
// JsonRefused or ConfigRefused, or errors from validate; anything else that
// escapes (another exception, a sanitizer report) is a finding.
#include <cstddef>
#include <cstdint>

#include "core/config/config.h"
#include "core/config/json_read.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptdp;
  try {
    // A machine named in the input is looked up among the committed profiles.
    const Config c = config_from_json(parse_json(fuzz::as_text(data, size), "fuzz-config"), default_machines_dir());
    if (validate(c).empty()) (void)to_json(c).dump();  // an accepted config is echoed into every result
  } catch (const JsonRefused&) {
  } catch (const ConfigRefused&) {
  }
  return 0;
}
