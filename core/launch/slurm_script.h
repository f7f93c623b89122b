// The text of Slurm batch scripts: one `sbatch` script per job, with the
// resources a launch shape needs, and a submit script that sbatches a list of
// them. Pure text, so the headers are tested without Slurm. Nothing a job
// carries becomes code: every header value is of a safe alphabet, notes and
// the command hold no control character (so the script has exactly the lines
// written here), and the command's words are shell-quoted by whoever built it.
#pragma once
#include <stdexcept>
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

// The longest job a script asks for: --time is at most this (30 days).
inline constexpr double kMaxSlurmTimeS = 30 * 24 * 3600.0;

// A job whose fields cannot be written into a script; what() names the field.
struct SlurmScriptRefused : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Why `value` cannot follow `#SBATCH --option=`, or "": sbatch reads a header
// line as words (white space splits them; quotes and backslashes are read) and
// expands '%' patterns in file names, so a value is 1 to 4096 bytes of letters,
// digits and . _ - / + , : = @ ~ only.
std::string sbatch_value_problem(const std::string& value);

// "#!/bin/bash", the #SBATCH headers, the notes, `exec command`. Throws
// SlurmScriptRefused for a name or output that sbatch_value_problem refuses,
// a note or command with a control character, or a time limit that is not a
// number in [0, kMaxSlurmTimeS].
std::string sbatch_script(const SlurmJob& job);

// Slurm's --time spelling of a duration, rounded up to whole minutes: "0:35:00".
// `seconds` is a number in [0, kMaxSlurmTimeS] (sbatch_script checks).
std::string slurm_time(double seconds);

// A script that sbatches `scripts` (paths relative to its own folder) in order,
// passing its arguments to each sbatch (`sh submit.sh --partition=gpu`);
// SBATCH in the environment names another submitter (`SBATCH=bash` runs them here).
// Throws SlurmScriptRefused for a path with a control character.
std::string submit_script(const std::vector<std::string>& scripts);

}  // namespace ptdp
