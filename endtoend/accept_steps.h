// The steps of `ptdp accept`: each a step of the step runner
// (core/process/step_runner.h), a benchmark program or `ptdp train`, multi-rank
// ones through the Launcher, so a crash or a hang is a recorded outcome and the
// suite goes on; each step's output file read into the figures the machine's
// acceptance bands check.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/process/step_runner.h"

namespace ptdp::cli {

// What one step measured, or why it has no figures.
struct StepOutcome {
  std::string name;                      // "gemm", "collectives_intra", ...
  std::vector<std::string> metrics;      // the acceptance metrics it gives (acceptance_band.h)
  Outcome status = Outcome::skipped;
  std::string reason;                    // unless ok: why
  std::map<std::string, double> values;     // metric -> measured value
  std::map<std::string, double> projected;  // metric -> the projection of the same, where there is one
  nlohmann::json details = nlohmann::json::object();  // the figures behind the values (busbw per size, ...)
  std::string command;                   // the command line it ran
  std::filesystem::path log;             // its stdout and stderr
  double seconds = 0;
};

// Reads a step's output file into the outcome's values and details; throws
// (std::exception) when the file is not what the step writes.
using StepReader = std::function<void(const std::filesystem::path& output, StepOutcome& outcome)>;

// A step of the suite: what it runs (step.not_run: skipped, and why), the
// metrics it gives and how its output (step.output) becomes their figures.
struct StepSpec {
  Step step;
  std::vector<std::string> metrics;
  StepReader read;
};

// Runs the steps in order, one at a time, handing each one's outcome to
// finished() as it ends; never throws for what a child did (a crash, a non-zero
// exit, a missing or unreadable output are outcomes with the reason and the
// log's last lines).
void run_accept_steps(const std::vector<StepSpec>& steps, const std::function<void(StepOutcome)>& finished);

// Readers of the programs' outputs (Google Benchmark JSON, a result file).
// GEMM: `metric` = the TFLOP/s of the one run whose name starts with `prefix`.
StepReader read_gemm(const std::string& metric, const std::string& prefix);
// Attention: `metric` = (forward + backward FLOPs) / (forward + backward time)
// of the runs named PREFIX_fwd and PREFIX_bwd.
StepReader read_attention(const std::string& metric, const std::string& prefix);
// Collectives: busbw per message size into details, `metric` = the best.
StepReader read_busbw(const std::string& metric);
// `ptdp train`'s result: `metric` = model TFLOP/s per GPU at the median
// iteration time, measured and projected (its "projected" block).
StepReader read_train(const std::string& metric);

}  // namespace ptdp::cli
