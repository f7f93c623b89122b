// Running an acceptance step as a child process and reading what it wrote.
#include "endtoend/accept_steps.h"

#include <algorithm>
#include <thread>

#include "core/config/json_read.h"
#include "core/launch/launcher.h"
#include "core/metrics/result.h"
#include "core/sim/calibrate.h"
#include "endtoend/child_process.h"

namespace ptdp::cli {

using nlohmann::json;

const char* to_string(StepStatus s) {
  switch (s) {
    case StepStatus::ok: return "ok";
    case StepStatus::failed: return "failed";
    case StepStatus::skipped: return "skipped";
  }
  return "?";
}

namespace {

// The iteration runs of a benchmark file (aggregates left out); a run that
// reported an error fails the step with that error.
std::vector<json> benchmark_runs(const std::filesystem::path& output) {
  const json j = read_benchmark_json(output);
  std::vector<json> runs;
  for (const json& run : j["benchmarks"]) {
    if (run.value("run_type", "iteration") != "iteration") continue;
    if (run.value("error_occurred", false))
      throw std::runtime_error(run.value("name", "?") + ": " + run.value("error_message", "error"));
    runs.push_back(run);
  }
  return runs;
}

const json& run_named(const std::vector<json>& runs, const std::string& prefix) {
  for (const json& run : runs)
    if (run.value("name", "").rfind(prefix, 0) == 0) return run;
  throw std::runtime_error("no benchmark run named " + prefix + "* in the output");
}

double counter(const json& run, const char* name) {
  if (!run.contains(name) || !run[name].is_number())
    throw std::runtime_error(run.value("name", "?") + ": no counter " + name);
  return run[name].get<double>();
}

}  // namespace

StepOutcome run_step(const StepSpec& spec, const std::filesystem::path& log, double timeout_s) {
  StepOutcome o;
  o.name = spec.name, o.metrics = spec.metrics;
  if (!spec.skip.empty()) {
    o.reason = spec.skip;
    return o;
  }
  o.command = shell_join(spec.argv);
  o.log = log;
  o.status = StepStatus::failed;
  std::error_code ignored;
  std::filesystem::remove(spec.output, ignored);
  ChildProcess child(spec.argv, log);
  int code = 0;
  while (!child.poll(code) && child.seconds() < timeout_s) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  o.seconds = child.seconds();
  const bool ended = child.poll(code);
  if (!ended) {
    child.stop();
    o.reason = "no result within " + std::to_string(static_cast<int>(timeout_s)) + " s";
    return o;
  }
  const std::string tail = log_tail(log, 3);
  if (code != 0) {
    o.reason = (code >= 128 ? "killed by signal " + std::to_string(code - 128) : "exit " + std::to_string(code)) +
               (tail.empty() ? "" : ": " + tail);
    return o;
  }
  try {
    spec.read(spec.output, o);
    o.status = StepStatus::ok;
  } catch (const std::exception& e) {
    o.values.clear();
    o.reason = std::string("exit 0 but its output is refused: ") + e.what();
  }
  return o;
}

StepReader read_gemm(const std::string& metric, const std::string& prefix) {
  return [metric, prefix](const std::filesystem::path& output, StepOutcome& o) {
    const std::vector<json> runs = benchmark_runs(output);
    const json& run = run_named(runs, prefix);
    o.values[metric] = counter(run, "TFLOP/s");
    o.details = {{"benchmark", run.value("name", "")}, {"m", counter(run, "m")}, {"n", counter(run, "n")},
                 {"k", counter(run, "k")}, {"seconds", benchmark_seconds(run)}, {"tflops", o.values[metric]}};
  };
}

StepReader read_attention(const std::string& metric, const std::string& prefix) {
  return [metric, prefix](const std::filesystem::path& output, StepOutcome& o) {
    const std::vector<json> runs = benchmark_runs(output);
    const json &fwd = run_named(runs, prefix + "_fwd/"), &bwd = run_named(runs, prefix + "_bwd/");
    const double flops = counter(fwd, "flops") + counter(bwd, "flops");
    const double seconds = benchmark_seconds(fwd) + benchmark_seconds(bwd);
    o.values[metric] = flops / seconds / 1e12;
    o.details = {{"forward", {{"benchmark", fwd.value("name", "")}, {"tflops", counter(fwd, "TFLOP/s")}}},
                 {"backward", {{"benchmark", bwd.value("name", "")}, {"tflops", counter(bwd, "TFLOP/s")}}}};
  };
}

StepReader read_busbw(const std::string& metric) {
  return [metric](const std::filesystem::path& output, StepOutcome& o) {
    const std::vector<json> runs = benchmark_runs(output);
    json sizes = json::array();
    double best = 0;
    for (const json& run : runs) {
      const double busbw = counter(run, "busbw_gbs");
      if (counter(run, "wrong") != 0) throw std::runtime_error(run.value("name", "?") + ": wrong results");
      sizes.push_back({{"bytes", counter(run, "bytes")}, {"busbw_gbs", busbw}, {"seconds", benchmark_seconds(run)}});
      best = std::max(best, busbw);
    }
    if (runs.empty()) throw std::runtime_error("no collective runs in the output");
    o.values[metric] = best;
    o.details = {{"ranks", counter(runs.front(), "ranks")}, {"ranks_per_node", counter(runs.front(), "ranks_per_node")},
                 {"busbw_per_size", sizes}};
  };
}

StepReader read_train(const std::string& metric) {
  return [metric](const std::filesystem::path& output, StepOutcome& o) {
    const RunResult r = read_result(read_json_file(output), output.string());
    const double iteration = r.median_iteration_s();
    o.values[metric] = model_tflops_per_gpu(r.config, iteration);
    o.details = {{"median_iteration_s", iteration}, {"world_size", r.config.plan.world_size()},
                 {"global_batch", r.config.plan.global_batch}, {"model_tflops_per_gpu", o.values[metric]}};
    if (r.projected) {
      o.projected[metric] = model_tflops_per_gpu(r.config, r.projected->median_iteration_s());
      o.details["projected_iteration_s"] = r.projected->median_iteration_s();
    } else {
      o.details["projected_error"] = r.projected_error;
    }
  };
}

}  // namespace ptdp::cli
