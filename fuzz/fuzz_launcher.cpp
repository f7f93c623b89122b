// libFuzzer target: a launcher template, read as `ptdp sweep --launcher` and
// `ptdp accept --launcher` read it (Launcher::parse), then expanded for a
// command whose words hold shell syntax. A refusal is LauncherRefused; an
// accepted template's line holding a control character (a line of its own in
// an emitted script), or anything else that escapes, is a finding.
#include <cstddef>
#include <cstdint>

#include "core/launch/launcher.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptdp;
  try {
    const Launcher l = Launcher::parse(fuzz::as_text(data, size), "mpirun");
    Machine node;
    node.gpus_per_node = 8;
    const std::string line = l.command_line(launch_shape(20, node), {"ptdp", "train", "$(touch x)", "a'b", "`c`;d"});
    if (!control_character_problem(line).empty()) __builtin_trap();
  } catch (const LauncherRefused&) {
  }
  return 0;
}
