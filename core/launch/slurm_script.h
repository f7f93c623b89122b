// The text of Slurm batch scripts: one `sbatch` script per job, with the
// resources a launch shape needs, and a submit script that sbatches a list of
// them. Pure text, so the headers are tested without Slurm.
#pragma once
#include <string>
#include <vector>

#include "core/launch/launcher.h"

namespace ptdp {

struct SlurmJob {
  std::string name;               // --job-name
  LaunchShape shape;              // --nodes, --ntasks, --ntasks-per-node
  bool gpus = false;              // a GPU job: --gpus-per-node=shape.gpus_per_node
  double time_limit_s = 0;        // --time, whole minutes rounded up (at least one)
  std::string output;             // --output: where Slurm writes the job's own stdout and stderr
  std::vector<std::string> notes;  // comment lines after the headers: what the job does
  std::string command;            // the shell command line the job runs (exec'd)
};

// "#!/bin/bash", the #SBATCH headers, the notes, `exec command`.
std::string sbatch_script(const SlurmJob& job);

// Slurm's --time spelling of a duration, rounded up to whole minutes: "0:35:00".
std::string slurm_time(double seconds);

// A script that sbatches `scripts` (paths relative to its own folder) in order,
// passing its arguments to each sbatch (`sh submit.sh --partition=gpu`);
// SBATCH in the environment names another submitter (`SBATCH=bash` runs them here).
std::string submit_script(const std::vector<std::string>& scripts);

}  // namespace ptdp
