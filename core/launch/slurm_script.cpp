// sbatch headers from a launch shape, and the submit-all script.
#include "core/launch/slurm_script.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ptdp {

std::string slurm_time(double seconds) {
  const long minutes = std::max(1L, static_cast<long>(std::ceil(seconds / 60)));
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld:00", minutes / 60, minutes % 60);
  return text;
}

std::string sbatch_script(const SlurmJob& job) {
  std::string s = "#!/bin/bash\n";
  const auto header = [&](const std::string& option) { s += "#SBATCH --" + option + "\n"; };
  header("job-name=" + job.name);
  header("nodes=" + std::to_string(job.shape.nodes));
  header("ntasks=" + std::to_string(job.shape.ranks));
  header("ntasks-per-node=" + std::to_string(job.shape.ranks_per_node));
  if (job.gpus) header("gpus-per-node=" + std::to_string(job.shape.gpus_per_node));
  header("time=" + slurm_time(job.time_limit_s));
  if (!job.output.empty()) header("output=" + job.output);
  for (const auto& note : job.notes) s += "# " + note + "\n";
  return s + "exec " + job.command + "\n";
}

std::string submit_script(const std::vector<std::string>& scripts) {
  std::string s =
      "#!/bin/sh\n"
      "# Submits every job of this folder: sh submit.sh [sbatch options, e.g. --partition=gpu --account=ACCOUNT]\n"
      "set -e\n"
      "cd \"$(dirname \"$0\")\"\n";
  for (const auto& script : scripts) s += "\"${SBATCH:-sbatch}\" \"$@\" " + shell_quote(script) + "\n";
  return s;
}

}  // namespace ptdp
