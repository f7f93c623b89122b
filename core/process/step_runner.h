// The one step runner, under `ptdp sweep` (its points), `ptdp sweep-slurm-point`
// and `ptdp accept` (its steps); scripts/campaign/runner.py runs the GPU
// campaign's steps by the same rules. A step is data: one child process's
// command, time limit, log and result file. Its outcome (outcome.h) is read
// from its exit status and its result file alone, never from what it printed,
// and a crash, an out-of-memory or a hang is a recorded outcome, never the end
// of the list.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/process/outcome.h"

namespace ptdp {

// What the runner records of one step.
struct StepRun {
  Outcome outcome = Outcome::skipped;
  std::string reason;     // unless ok: why ("exit 1: <the log's last lines>", "no result within 120 s")
  double seconds = 0;     // how long it ran
  nlohmann::json result;  // what its reader took from its result file; null otherwise
};

// Reads a step's result file once the step exited 0: sets run.result, and may
// set the outcome and reason the file records (a sweep point's own status).
// Throws std::exception when the file is not what the step writes: the step
// failed.
using ResultReader = std::function<void(const std::filesystem::path& output, StepRun& run)>;

struct Step {
  std::string name;
  std::vector<std::string> argv;  // the command (argv[0] searched in PATH)
  std::filesystem::path log;      // its stdout and stderr
  std::filesystem::path output;   // the result file it writes; removed before it starts
  double time_limit_s = 0;        // past this it is ended and recorded as timeout (0: no limit)
  ResultReader read;              // how its result file is read; null: the file need only exist
  bool exclusive = false;         // runs alone (a measurement holds the machine's devices)
  std::optional<StepRun> not_run;  // set: never started, recorded as this (skipped or refused, and why)
};

// Step i ended (or, not run, came to its turn) with `run`.
using StepFinished = std::function<void(std::size_t i, const StepRun& run)>;

// Runs `steps` in their order, up to `jobs` at once and an exclusive step
// alone, calling finished() as each ends; a step not run is recorded at its
// turn, as one that starts and ends at once. Should interrupted() turn true, it
// ends the running steps, starts no more, and returns how many it ended
// (0 when every step finished).
std::size_t run_steps(const std::vector<Step>& steps, int jobs, const StepFinished& finished,
                      const std::function<bool()>& interrupted = {});

// One step, to its end or its limit.
StepRun run_step(const Step& step);

}  // namespace ptdp
