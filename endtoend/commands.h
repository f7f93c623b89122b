// The subcommands of `ptdp`, each registered on the CLI11 app and run by main.
// Exit status: 0 success, 1 a failure while running, 2 input refused,
// 4 out of memory: `ptdp train` (device or host) or a sweep point (the sweep
// runner records "oom" from this status alone).
#pragma once
#include <functional>

#include <CLI/CLI.hpp>

namespace ptdp::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitRefused = 2;
// Not 3: MPI_Abort in MpiCommunicator::abort ends the job with 3.
constexpr int kExitOutOfMemory = 4;

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
