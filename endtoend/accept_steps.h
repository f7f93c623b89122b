// The steps of `ptdp accept`: each a child process (a benchmark program or
// `ptdp train`, multi-rank ones through the Launcher), so a crash or a hang is
// a recorded failure and the suite goes on; each step's output file read into
// the figures the machine's acceptance bands check.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptdp::cli {

enum class StepStatus { ok, failed, skipped };
const char* to_string(StepStatus s);

// What one step measured, or why it has no figures.
struct StepOutcome {
  std::string name;                      // "gemm", "collectives_intra", ...
  std::vector<std::string> metrics;      // the acceptance metrics it gives (acceptance_band.h)
  StepStatus status = StepStatus::skipped;
  std::string reason;                    // failed or skipped: why
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

// A step to run: `argv` writes `output`, which `read` turns into figures.
struct StepSpec {
  std::string name;
  std::vector<std::string> metrics;
  std::vector<std::string> argv;
  std::filesystem::path output;
  StepReader read;
  std::string skip;  // non-empty: not run, recorded as skipped for this reason
};

// Runs `spec` with its output in `log`, for at most `timeout_s`; never throws
// for what the child did (a crash, a non-zero exit, a missing or unreadable
// output are a failed outcome with the reason and the log's last lines).
StepOutcome run_step(const StepSpec& spec, const std::filesystem::path& log, double timeout_s);

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
