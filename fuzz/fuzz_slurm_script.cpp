// libFuzzer target: the values a sweep hands the Slurm script writer. The
// input, split at NUL bytes, is a job's name, output path, note and command
// (missing parts empty); sbatch_script writes the job or refuses it
// (SlurmScriptRefused). A written script with more lines than the shebang, the
// headers, the note and the exec line (a value that became a line of its own,
// which the job would run), or anything else that escapes, is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/launch/slurm_script.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptdp;
  std::vector<std::string> parts(1);
  for (const char c : fuzz::as_text(data, size)) {
    if (c == '\0') parts.emplace_back();
    else parts.back() += c;
  }
  parts.resize(std::max<std::size_t>(parts.size(), 4));
  Machine node;
  node.gpus_per_node = 8;
  const SlurmJob job{parts[0], launch_shape(3, node), true, 90, parts[1], {parts[2]}, parts[3]};
  try {
    const std::string script = sbatch_script(job);
    const long lines = std::count(script.begin(), script.end(), '\n');
    const long expected = 1 + 6 + (job.output.empty() ? 0 : 1) + 1 + 1;  // shebang, headers, output, note, exec
    if (lines != expected || script.find('\r') != std::string::npos) __builtin_trap();
  } catch (const SlurmScriptRefused&) {
  }
  return 0;
}
