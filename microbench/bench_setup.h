// What every benchmark program shares: its own options (read before Google
// Benchmark's), the backend they run on, the shapes a config issues, and the
// context written into every output (device, versions, commit, peak used).
#pragma once
#include <optional>
#include <string>

#include "core/config/config.h"
#include "core/runtime/backend.h"

namespace ptdp::bench {

struct Options {
  Device device = Device::cpu;  // --device cpu | cuda
  std::string config;          // shapes of this config (and its machine's peak)
  std::string machine;         // profile whose peak the counters use (default: the config's, else cpu-host / h100-80gb)
  std::int64_t max_bytes = 1 << 30;  // largest collective message
  int concurrent = 1;  // --concurrent N: N copies of this program run at once on this host (recorded, not launched)
};

// The value of "--name=value" or "--name value" at argv[i]; advances i past it.
std::optional<std::string> value_of(const char* name, int& i, int argc, char** argv);
// Prints "ptdp benchmark: <why>" and exits 2 (refused input).
[[noreturn]] void refuse(const std::string& why);

// Removes ptdp's own options (--device, --config, --machine, --max-bytes, --concurrent) from
// argv, so the rest goes to benchmark::Initialize. Exits 2 with a message on bad input.
Options take_options(int& argc, char** argv);

// The config to take shapes from: the file, or a small default GPT on `machine`.
Config shapes_config(const Options& o);

// Adds device, versions, commit, machine and peak to Google Benchmark's context.
void add_context(const Options& o, const Config& cfg, const nlohmann::json& backend_info, const std::string& mpi);

// Dense peak of the config's machine for its precision, in FLOP/s (0 when unknown).
double peak_flops(const Config& cfg);

}  // namespace ptdp::bench
