// libFuzzer target: a `ptdp train --fault` spec, read as train reads it
// (parse_fault, for a job of 4 ranks running 10 iterations). A refusal is
// FaultRefused; an accepted fault outside the job (a rank or iteration that
// never comes, a slowdown beyond its bound), or anything else that escapes,
// is a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/runtime/fault_spec.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptdp;
  try {
    const Fault f = parse_fault(fuzz::as_text(data, size), 4, 10);
    const bool slow = f.kind == Fault::Kind::slow;
    if (f.rank < 0 || f.rank >= 4 || f.iteration < 0 || f.iteration >= 10 ||
        (slow && !(f.factor > 1 && f.factor <= kMaxFaultSlowdown)))
      __builtin_trap();
  } catch (const FaultRefused&) {
  }
  return 0;
}
