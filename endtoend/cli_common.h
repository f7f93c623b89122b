// Pieces the subcommands share: printing refused input, loading a config with
// every problem reported.
#pragma once
#include <string>

#include "core/config/config.h"

namespace ptdp::cli {

// "ptdp COMMAND: input refused (N problems):" then one line per problem, on stderr.
void print_refused(const std::string& command, const ConfigErrors& errors);

// Reads the config in `file` into `out` and validates it for `world_size`
// ranks (0: any). Returns every problem; `read` tells whether `out` was read
// (so further checks of its fields make sense).
ConfigErrors load_checked_config(const std::string& file, int world_size, Config& out, bool& read);

// What the runtime needs of a config to run it on `device` (train, slice): the
// device is usable, the precision is the device's, the attention path exists,
// and no feature only the projector models is asked for.
ConfigErrors check_runnable(Device device, const Config& cfg);

}  // namespace ptdp::cli
