// The acceptance steps run by the step runner, and the readers of what they wrote.
#include "endtoend/accept_steps.h"

#include <algorithm>

#include "core/accounting/throughput.h"
#include "core/config/json_read.h"
#include "core/launch/launcher.h"
#include "core/results/result.h"
#include "core/sim/calibrate.h"

namespace ptdp::cli {

using nlohmann::json;

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

void run_accept_steps(const std::vector<StepSpec>& specs, const std::function<void(StepOutcome)>& finished) {
  std::vector<StepOutcome> outcomes(specs.size());  // sized once: each reader fills its own element
  std::vector<Step> steps;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    StepOutcome& o = outcomes[i];
    o.name = specs[i].step.name, o.metrics = specs[i].metrics;
    steps.push_back(specs[i].step);
    steps.back().read = [&o, read = specs[i].read](const std::filesystem::path& output, StepRun&) {
      try {
        read(output, o);
      } catch (...) {  // no figures from a file the step refuses
        o.values.clear(), o.projected.clear();
        throw;
      }
    };
  }
  run_steps(steps, 1, [&](std::size_t i, const StepRun& run) {
    StepOutcome& o = outcomes[i];
    o.status = run.outcome, o.reason = run.reason, o.seconds = run.seconds;
    if (!steps[i].not_run) o.command = shell_join(steps[i].argv), o.log = steps[i].log;
    finished(std::move(o));
  });
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
    o.values[metric] = r.throughput().model_tflops_per_gpu;
    o.details = {{"median_iteration_s", iteration}, {"world_size", r.config.plan.world_size()},
                 {"global_batch", r.config.plan.global_batch}, {"model_tflops_per_gpu", o.values[metric]}};
    if (r.projected) {
      o.projected[metric] = throughput(r.config, r.projected->median_iteration_s()).model_tflops_per_gpu;
      o.details["projected_iteration_s"] = r.projected->median_iteration_s();
    } else {
      o.details["projected_error"] = r.projected_error;
    }
  };
}

}  // namespace ptdp::cli
