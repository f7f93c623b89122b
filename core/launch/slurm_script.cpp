// sbatch headers from a launch shape, and the submit-all script; every value
// checked before it is written into a line.
#include "core/launch/slurm_script.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "core/config/json_read.h"

namespace ptdp {

namespace {

constexpr std::size_t kMaxSbatchValueBytes = 4096;
constexpr std::string_view kSbatchPunctuation = "._-/+,:=@~";  // beside letters and digits, all a header value holds

// `what`'s problem as a refusal naming the field and showing the value (escaped, cut short).
[[noreturn]] void refuse(const std::string& field, const std::string& value, const std::string& why) {
  throw SlurmScriptRefused("Slurm job " + field + " " + json_excerpt(nlohmann::json(value)) + ": " + why);
}

void check_value(const std::string& field, const std::string& value) {
  if (const std::string why = sbatch_value_problem(value); !why.empty()) refuse(field, value, why);
}

void check_line(const std::string& field, const std::string& text) {
  if (const std::string why = control_character_problem(text); !why.empty()) refuse(field, text, why);
}

}  // namespace

std::string sbatch_value_problem(const std::string& value) {
  if (value.empty() || value.size() > kMaxSbatchValueBytes)
    return "an #SBATCH value is 1 to " + std::to_string(kMaxSbatchValueBytes) + " bytes";
  const auto bad = std::find_if(value.begin(), value.end(), [](char c) {
    return !std::isalnum(static_cast<unsigned char>(c)) && kSbatchPunctuation.find(c) == std::string_view::npos;
  });
  if (bad == value.end()) return "";
  const auto byte = static_cast<unsigned char>(*bad);
  char shown[16];
  if (std::isprint(byte)) std::snprintf(shown, sizeof shown, "'%c' (0x%02x)", *bad, static_cast<unsigned>(byte));
  else std::snprintf(shown, sizeof shown, "0x%02x", static_cast<unsigned>(byte));
  return std::string("holds ") + shown + " at byte " + std::to_string(bad - value.begin()) +
         ", which an #SBATCH header cannot hold (only letters, digits and . _ - / + , : = @ ~)";
}

std::string slurm_time(double seconds) {
  const long minutes = std::max(1L, static_cast<long>(std::ceil(seconds / 60)));
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld:00", minutes / 60, minutes % 60);
  return text;
}

std::string sbatch_script(const SlurmJob& job) {
  check_value("--job-name", job.name);
  if (!job.output.empty()) check_value("--output", job.output);
  for (const auto& note : job.notes) check_line("note", note);
  check_line("command", job.command);
  if (!(job.time_limit_s >= 0 && job.time_limit_s <= kMaxSlurmTimeS))
    refuse("--time", std::to_string(job.time_limit_s),
           "a time limit is 0 to " + std::to_string(static_cast<long>(kMaxSlurmTimeS)) + " s");
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
  for (const auto& script : scripts) {
    check_line("script", script);
    s += "\"${SBATCH:-sbatch}\" \"$@\" " + shell_quote(script) + "\n";
  }
  return s;
}

}  // namespace ptdp
