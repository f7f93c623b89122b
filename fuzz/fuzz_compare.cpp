// libFuzzer target: `ptdp compare BASE NEW` without its printing. The input
// is split at its first NUL byte into BASE and NEW (no NUL: a document
// compared with itself, so every committed result is a seed as it is); both
// are read with compare_entries, compared, and the comparison written as
// JSON. A refusal is what the command catches, std::runtime_error (JsonRefused
// and "not a ptdp result"); anything else that escapes is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "core/config/json_read.h"
#include "core/gate/compare.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptdp;
  const std::string text = fuzz::as_text(data, size);
  const std::size_t cut = text.find('\0');
  const std::string base = text.substr(0, cut), now = cut == std::string::npos ? base : text.substr(cut + 1);
  try {
    const Comparison c = compare_results(compare_entries(parse_json(base, "BASE"), "BASE"),
                                         compare_entries(parse_json(now, "NEW"), "NEW"), 5.0);
    (void)to_json(c).dump();  // what `ptdp compare --out` writes
  } catch (const std::runtime_error&) {
  }
  return 0;
}
