// The verdict of `ptdp accept`: each metric a step measured against the
// profile's band for it, and the three reports (JSON, Markdown, JUnit XML)
// written together into one folder, all or none.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/machine.h"
#include "endtoend/accept_steps.h"

namespace ptdp::cli {

// pass, fail: the value against its band; failed: its step failed (no value);
// skipped: its step did not run; unchecked: measured, but the profile has no band.
enum class CheckStatus { pass, fail, failed, skipped, unchecked };
const char* to_string(CheckStatus s);

struct Check {
  std::string metric, step;
  CheckStatus status = CheckStatus::skipped;
  std::optional<double> value, projected;
  std::optional<AcceptanceBand> band;
  std::string reason;  // why it failed, was skipped or is unchecked
  double seconds = 0;  // its step's
};

// One check per metric of every step, in the steps' order.
std::vector<Check> check_bands(const std::vector<StepOutcome>& steps, const Machine& machine);
// True when no check failed and no step failed.
bool accepted(const std::vector<Check>& checks);

// What the reports say beside the checks.
struct AcceptRun {
  Machine machine;
  std::string profile;   // the --machine given (a name or a file)
  int nodes = 1;
  std::string launcher;  // the template, presets spelled out
  std::vector<StepOutcome> steps;
  std::vector<Check> checks;
};

// The report files in `dir`: accept.json, accept.md, accept-junit.xml.
std::vector<std::filesystem::path> accept_report_files(const std::filesystem::path& dir);
nlohmann::json accept_json(const AcceptRun& run);
// Writes the three together (OutputFiles): all or none; throws std::runtime_error.
void write_accept_reports(const AcceptRun& run, const std::filesystem::path& dir);

}  // namespace ptdp::cli
