// Pieces the subcommands share: printing refused input, loading a config with
// every problem reported, checking output paths before any work.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/config/config.h"

namespace ptdp::cli {

// "ptdp COMMAND: input refused (N problems):" then one line per problem, on stderr.
void print_refused(const std::string& command, const ConfigErrors& errors);

// Reads the config in `file` into `out` and validates it for `world_size`
// ranks (0: any). Returns every problem; `read` tells whether `out` was read
// (so further checks of its fields make sense). `at_hand`: the machine of a
// config that names none (config.h; empty: refused).
ConfigErrors load_checked_config(const std::string& file, int world_size, Config& out, bool& read,
                                 const MachineAtHand& at_hand = {});

// What the runtime needs of a config to run it on `device` (train, slice): the
// device is usable, the precision is the device's, the attention path exists,
// no feature only the projector models is asked for, and the plan is within
// ptdp's work limits (core/sim/plan_limits.h).
ConfigErrors check_runnable(Device device, const Config& cfg);

// Runnable but probably not meant (the distributed optimizer over one
// data-parallel rank): sentences to print as warnings.
std::vector<std::string> runnable_warnings(const Config& cfg);

// An output option and its path ({"--out", "r.json"}); an empty path is not asked for.
using OutputOption = std::pair<std::string, std::string>;

// Every output that cannot be written (output_path_problem), two options naming
// the same file, and an output that is one of the command's `inputs` (by
// device and inode: a link or another spelling of the path is the same file):
// checked before any work, so that a bad path is input refused and no input is
// ever overwritten.
ConfigErrors check_outputs(const std::vector<OutputOption>& outputs, const std::vector<OutputOption>& inputs = {});

}  // namespace ptdp::cli
