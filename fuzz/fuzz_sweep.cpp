// libFuzzer target: a sweep file, read as `ptdp sweep` reads it (load_sweep
// with the paper's reference experiments and the committed machine profiles),
// then every point's results key. load_sweep takes a path, so the input goes
// through a scratch file. A refusal is SweepRefused; anything else that
// escapes is a finding.
#include <cstddef>
#include <cstdint>

#include "core/config/config.h"
#include "core/sweep/sweep.h"
#include "core/sweep/sweep_results.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptdp;
  // Read once: the published values that "paper" pointers are looked up in.
  static const nlohmann::json reference = load_reference_experiments();
  const fuzz::ScratchFile file("sweep", fuzz::as_text(data, size));
  try {
    const Sweep s = load_sweep(file.path(), default_machines_dir(), &reference);
    for (const SweepPoint& p : s.points) (void)point_key(s, p, ResultMode::projected);
  } catch (const SweepRefused&) {
  }
  return 0;
}
