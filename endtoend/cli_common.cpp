// Shared helpers of the subcommands.
#include "endtoend/cli_common.h"

#include <cstdio>

namespace ptdp::cli {

void print_refused(const std::string& command, const ConfigErrors& errors) {
  std::fprintf(stderr, "ptdp %s: input refused (%zu problem%s):\n", command.c_str(), errors.size(),
               errors.size() == 1 ? "" : "s");
  for (const auto& e : errors) std::fprintf(stderr, "  %s: %s\n", e.field.c_str(), e.message.c_str());
}

ConfigErrors load_checked_config(const std::string& file, int world_size, Config& out, bool& read) {
  read = false;
  try {
    out = load_config(file, default_machines_dir());
  } catch (const ConfigRefused& e) {
    return e.errors();
  }
  read = true;
  return validate(out, world_size);
}

}  // namespace ptdp::cli
