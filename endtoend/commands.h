// The subcommands of `ptdp`, each registered on the CLI11 app and run by main.
// Exit status (core/process/outcome.h): 0 success, 1 a failure while running,
// 2 input refused, 4 out of memory: `ptdp train` (device or host) or a sweep
// point (the step runner records "oom" from this status alone).
#pragma once
#include <functional>

#include <CLI/CLI.hpp>

#include "core/process/outcome.h"

namespace ptdp::cli {

using ptdp::kExitFailed, ptdp::kExitOk, ptdp::kExitOutOfMemory, ptdp::kExitRefused;  // as ptdp::cli::kExit* too

// A subcommand registered on the app, and how to run it once parsed.
struct Command {
  CLI::App* sub = nullptr;
  std::function<int()> run;
};

Command add_train_command(CLI::App& app);
Command add_project_command(CLI::App& app);
Command add_validate_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_calibrate_command(CLI::App& app);
Command add_sweep_point_command(CLI::App& app);
Command add_sweep_slurm_point_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_history_command(CLI::App& app);
Command add_slice_command(CLI::App& app);
Command add_export_command(CLI::App& app);
Command add_accept_command(CLI::App& app);

}  // namespace ptdp::cli
