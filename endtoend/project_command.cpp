// `ptdp project`: projects a configuration on a machine profile with the
// simulator, optionally searching the choices the paper leaves unstated, and
// writes a result JSON of the measured runs' schema ("mode": "projected").
#include <cstdio>
#include <memory>

#include "core/metrics/result.h"
#include "core/metrics/result_io.h"
#include "core/sim/search.h"
#include "endtoend/cli_common.h"
#include "endtoend/commands.h"

namespace ptdp::cli {

namespace {

struct ProjectArgs {
  std::string config, out, trace, calibration;
  bool search = false, search_split = false;
  int top = 5;
};

void print_summary(const Config& c, const Projection& p, const char* label) {
  const nlohmann::json m = throughput_metrics(c, p.iteration_s);
  std::printf("%s t=%d p=%d d=%d v=%d b=%d %s: %.4g s/iteration, %.4g model TFLOP/s per GPU (%.1f%% of peak), "
              "bubble %.3f, memory %.3g GiB%s\n",
              label, c.plan.tp, c.plan.pp, c.plan.dp, c.plan.virtual_stages, c.plan.micro_batch,
              c.plan.schedule.c_str(), p.iteration_s, m["model_tflops_per_gpu"].get<double>(),
              m["percent_of_peak"].is_null() ? 0.0 : m["percent_of_peak"].get<double>(), p.bubble.mean_bubble,
              static_cast<double>(p.peak_bytes) / (1 << 30), p.fits ? "" : "  DOES NOT FIT");
}

nlohmann::json search_json(const std::vector<Candidate>& found, int top, int rejected) {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 1; i < found.size() && static_cast<int>(i) <= top; ++i) {
    const auto& c = found[i];
    list.push_back({{"plan", to_json(c.config.plan)}, {"iteration_s", c.projection.iteration_s},
                    {"model_tflops_per_gpu", throughput_metrics(c.config, c.projection.iteration_s)["model_tflops_per_gpu"]}});
  }
  return {{"candidates", found.size()}, {"rejected_does_not_fit", rejected}, {"runners_up", list}};
}

int run(const ProjectArgs& args) {
  Config cfg;
  bool read = false;
  ConfigErrors errors = load_checked_config(args.config, 0, cfg, read);
  if (read && errors.empty()) errors = check_projectable(cfg);
  if (!errors.empty()) {
    print_refused("project", errors);
    return kExitRefused;
  }
  std::unique_ptr<Calibration> calibration;
  try {
    if (!args.calibration.empty()) calibration = std::make_unique<Calibration>(Calibration::load(args.calibration));
    Projection proj;
    nlohmann::json search;
    if (args.search || args.search_split) {
      SearchSpace space;
      space.split_tp_pp = args.search_split;
      int rejected = 0;
      const auto found = search_plans(cfg, space, calibration.get(), &rejected);
      if (found.empty()) {
        std::fprintf(stderr, "ptdp project: no searched plan fits in memory (%d tried did not fit)\n", rejected);
        return kExitFailed;
      }
      for (std::size_t i = 1; i < found.size() && static_cast<int>(i) <= args.top; ++i)
        print_summary(found[i].config, found[i].projection, "  runner-up");
      cfg = found.front().config;
      proj = found.front().projection;
      search = search_json(found, args.top, rejected);
    } else {
      proj = project(cfg, calibration.get());
    }
    print_summary(cfg, proj, "projected");
    nlohmann::json result = projection_result(cfg, proj, calibration.get());
    if (!search.is_null()) result["search"] = search;
    if (!args.trace.empty()) {
      write_json_atomic(args.trace, chrome_trace(proj.timeline, "ptdp project (simulated iteration)"), -1);
      result["timeline"] = args.trace;
    }
    if (!args.out.empty()) write_json_atomic(args.out, result);
    return kExitOk;
  } catch (const std::runtime_error& e) {  // a calibration or machine that cannot serve this plan
    std::fprintf(stderr, "ptdp project: %s\n", e.what());
    return kExitRefused;
  }
}

}  // namespace

Command add_project_command(CLI::App& app) {
  auto args = std::make_shared<ProjectArgs>();
  CLI::App* sub = app.add_subcommand("project", "Project a configuration with the simulator (no GPU needed) and "
                                                "write a projected result JSON.");
  sub->add_option("--config", args->config, "Config JSON: {\"model\", \"plan\", \"machine\"}")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--out", args->out, "Write the result JSON here");
  sub->add_option("--trace", args->trace, "Write a Chrome trace of the simulated iteration (a track per stage)");
  sub->add_option("--calibration", args->calibration, "Calibration table from `ptdp calibrate` (measured op costs)")
      ->check(CLI::ExistingFile);
  sub->add_flag("--search", args->search, "Search micro-batch size and virtual stages among plans that fit");
  sub->add_flag("--search-split", args->search_split, "Also search the t/p split of the same model-parallel size");
  sub->add_option("--top", args->top, "Runners-up to report with --search")->capture_default_str();
  return {sub, [args] { return run(*args); }};
}

}  // namespace ptdp::cli
