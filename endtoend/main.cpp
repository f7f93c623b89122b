// ptdp: benchmark and scaling-study suite for 3D-parallel GPT training.
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config/data_root.h"
#include "core/config/json_read.h"
#include "core/results/build_info.h"
#include "endtoend/commands.h"

namespace {

// Runs a parsed command. An exception no command handled (a bug, or input no
// reader checked) ends it with exit 1 and one clear line, never std::terminate;
// std::bad_alloc with the out-of-memory status 4, by which the sweep runner
// records a point as "oom". The unwinding removes any staged output
// (OutputFiles), so no partial file is left.
int run_guarded(const ptdp::cli::Command& c) {
  const std::string name = c.sub->get_name();
  try {
    return c.run();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "ptdp %s: out of host memory (std::bad_alloc)\n", name.c_str());
    return ptdp::cli::kExitOutOfMemory;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptdp %s: failed: %s\n", name.c_str(), e.what());
  } catch (...) {
    std::fprintf(stderr, "ptdp %s: failed: an exception of unknown type\n", name.c_str());
  }
  return ptdp::cli::kExitFailed;
}

// The subcommand the command line names when it is none of ptdp's, else empty.
// The main app takes no option with a value, so its first argument not
// starting with '-' is the subcommand. Checked before CLI11 parses: CLI11 acts
// on --help first, so `ptdp diff --help` would print the main help and exit 0.
std::string unknown_subcommand(int argc, char** argv, const std::vector<ptdp::cli::Command>& commands) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") return "";  // the rest are positionals, CLI11 refuses them
    if (word.starts_with('-')) continue;
    for (const auto& c : commands)
      if (c.sub->get_name() == word) return "";
    return word;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ptdp: 3D-parallel (tensor, pipeline, data) GPT training benchmarks and projections.\n"
               "Reproduces Narayanan et al., SC'21 (Megatron-LM). Exit status: 0 success, "
               "1 failure while running, 2 input refused, 4 out of memory."};
  app.set_version_flag("--version", std::string("ptdp ") + ptdp::build_commit());
  app.require_subcommand(1);
  const std::vector<ptdp::cli::Command> commands = {ptdp::cli::add_train_command(app),
                                                    ptdp::cli::add_project_command(app),
                                                    ptdp::cli::add_validate_command(app),
                                                    ptdp::cli::add_compare_command(app),
                                                    ptdp::cli::add_history_command(app),
                                                    ptdp::cli::add_sweep_command(app),
                                                    ptdp::cli::add_calibrate_command(app),
                                                    ptdp::cli::add_sweep_point_command(app),
                                                    ptdp::cli::add_sweep_slurm_point_command(app),
                                                    ptdp::cli::add_slice_command(app),
                                                    ptdp::cli::add_export_command(app),
                                                    ptdp::cli::add_accept_command(app)};
  if (const std::string word = unknown_subcommand(argc, argv, commands); !word.empty()) {
    std::fprintf(stderr, "ptdp: refused: unknown subcommand '%s' (ptdp --help lists them)\n",
                 ptdp::cut_text(word, 40).c_str());
    return ptdp::cli::kExitRefused;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : ptdp::cli::kExitRefused;
  }
  try {
    (void)ptdp::data_root();  // a PTDP_DATA_DIR that holds no data is refused before any work
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ptdp: refused: %s\n", e.what());
    return ptdp::cli::kExitRefused;
  }
  for (const auto& c : commands)
    if (c.sub->parsed()) return run_guarded(c);
  return ptdp::cli::kExitRefused;
}
