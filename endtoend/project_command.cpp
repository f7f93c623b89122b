// `ptdp project`: projects a configuration on a machine profile with the
// simulator, optionally searching the choices the paper leaves unstated, and
// writes a result JSON of the measured runs' schema ("mode": "projected").
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "core/results/output_files.h"
#include "core/results/result.h"
#include "core/sim/plan_limits.h"
#include "core/sim/fit_margin.h"
#include "core/sim/search.h"
#include "endtoend/cli_common.h"
#include "endtoend/commands.h"

namespace ptdp::cli {

namespace {

struct ProjectArgs {
  std::string config, out, trace, calibration;
  bool search = false, search_split = false, search_uneven = false, search_tp_overlap = false;
  int top = 5;
  int checkpoint_every = 0;  // 0: not given
};

// The plan's switches beyond (t, p, d, v, b, schedule) that change what runs: "" or " +sp +tp-overlap ...".
// Data-parallel sharding by its ZeRO stage: dist-opt (Megatron's name for stage 1), zero-2, zero-3.
std::string plan_switches(const Plan& p) {
  static constexpr const char* kSharding[] = {"", "dist-opt", "zero-2", "zero-3"};
  std::string out;
  for (const auto& [on, name] :
       {std::pair{p.sequence_parallel, "sp"}, {p.tp_comm_overlap, "tp-overlap"},
        {p.shards_optimizer(), kSharding[static_cast<int>(p.dp_sharding)]}, {!p.layers_per_stage.empty(), "uneven"},
        {p.grad_precision == GradPrecision::compute, "16-bit-grads"}})
    if (on) out += std::string(" +") + name;
  return out;
}

void print_summary(const RunResult& r, const char* label) {
  const Plan& p = r.config.plan;
  const Throughput t = r.throughput();
  std::printf("%s t=%d p=%d d=%d v=%d b=%d %s%s: %.4g s/iteration, %.4g model TFLOP/s per GPU (%.1f%% of peak), "
              "bubble %.3f, memory %.3g GiB%s\n",
              label, p.tp, p.pp, p.dp, p.virtual_stages, p.micro_batch, p.schedule.c_str(), plan_switches(p).c_str(),
              r.median_iteration_s(),
              t.model_tflops_per_gpu, t.percent_of_peak.value_or(0), r.bubble.simulated.value_or(0),
              static_cast<double>(r.memory.peak_model()) / (1 << 30), r.memory.fits ? "" : "  DOES NOT FIT");
}

// One line: the validation's error for this class of configuration.
void print_expected_error(const nlohmann::json& e) {
  const nlohmann::json& c = e["class"];
  if (e["n"] == 0) {
    std::printf("  expected error: unknown (%s)\n", e["note"].get<std::string>().c_str());
    return;
  }
  std::printf("  expected error: mean |error| %.1f%%, max %.1f%%, mean %+.1f%% over %d published points (%s%s, pp %s, "
              "tp %s)\n",
              100 * e["mean_abs_error"].get<double>(), 100 * e["max_abs_error"].get<double>(),
              100 * e["mean_error"].get<double>(), e["n"].get<int>(), e["matched"] == "class" ? "class " : "all of ",
              c["machine"].get<std::string>().c_str(), c["pp_range"].get<std::string>().c_str(),
              c["tp_span"].get<std::string>().c_str());
  if (e["matched"] != "class") std::printf("    (%s)\n", e["note"].get<std::string>().c_str());
}

// One line: time shares by cost class and the rate that moves the result most.
void print_sensitivity(const nlohmann::json& s) {
  std::printf("  time shares:");
  for (const char* name : {"gemm", "attention", "memory_bound", "tensor_parallel", "pipeline", "data_parallel", "bubble",
                           "optimizer"})
    std::printf(" %s %.0f%%", name, 100 * s["shares"][name].get<double>());
  const nlohmann::json& most = s["most_sensitive"];
  if (most["parameter"].is_null()) {
    std::printf("; no machine rate moves it\n");
    return;
  }
  std::printf("; most sensitive: %s (%+.0f%% -> iteration %+.1f%%)\n", most["parameter"].get<std::string>().c_str(),
              100 * most["perturbation"].get<double>(), 100 * most["change"].get<double>());
}

// One line: the checkpoint's size, save and load times, and the share of
// training time that saving every N iterations costs.
void print_checkpoint(const CheckpointMetrics& c) {
  std::printf("  checkpoint: %.4g TB (%.4g GB per rank at most)", static_cast<double>(c.bytes_total.value_or(0)) / 1e12,
              static_cast<double>(c.bytes_per_rank_max.value_or(0)) / 1e9);
  if (!c.save_s || !c.load_s) {
    std::printf("; save and load times unknown (the machine profile has no filesystem)\n");
    return;
  }
  std::printf(", save %.3g s (%.4g GB/s), load %.3g s (%.4g GB/s)", *c.save_s, c.save_gbs.value_or(0), *c.load_s,
              c.load_gbs.value_or(0));
  if (c.every && c.save_share) std::printf("; saving every %d iterations: %.2f%% of training time", *c.every,
                                           100 * *c.save_share);
  std::printf("\n");
}

// The trace and the result together, or neither (a failure while running: exit 1).
int write_outputs(const ProjectArgs& args, const Projection& proj, const RunResult& result) {
  try {
    OutputFiles files;
    if (!args.trace.empty())
      files.add(args.trace, chrome_trace(proj.timeline, "ptdp project (simulated iteration)"), -1);
    if (!args.out.empty()) files.add(args.out, to_json(result));
    files.commit();
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "ptdp project: %s\n", e.what());
    return kExitFailed;
  }
  return kExitOk;
}

int run(const ProjectArgs& args) {
  Config cfg;
  bool read = false;
  ConfigErrors errors = load_checked_config(args.config, 0, cfg, read);
  if (read && errors.empty()) errors = check_projectable(cfg);
  if (read && errors.empty()) errors = check_work_limits(cfg.model, cfg.plan);
  for (auto& e : check_outputs({{"--trace", args.trace}, {"--out", args.out}},
                               {{"--config", args.config}, {"--calibration", args.calibration}}))
    errors.push_back(std::move(e));
  if (!errors.empty()) {
    print_refused("project", errors);
    return kExitRefused;
  }
  std::unique_ptr<Calibration> calibration;
  try {
    if (!args.calibration.empty()) calibration = std::make_unique<Calibration>(Calibration::load(args.calibration));
    if (const std::string why = calibration ? calibration->machine_mismatch(cfg.machine.name) : ""; !why.empty())
      throw std::runtime_error(why);
    Projection proj;
    nlohmann::json search;
    if (args.search || args.search_split || args.search_uneven || args.search_tp_overlap) {
      SearchSpace space;
      space.split_tp_pp = args.search_split;
      space.uneven_ends = args.search_uneven;
      space.tp_comm_overlap = args.search_tp_overlap;
      SearchOutcome found = project_best(cfg, space, calibration.get());
      if (!found.found) {
        std::fprintf(stderr, "ptdp project: no searched plan fits in memory (%d tried did not fit); the plan as given: %s\n",
                     found.rejected, margin_text(fit_margin(cfg, found.best.projection),
                                                 smallest_fitting_change(cfg, calibration.get())).c_str());
        return kExitFailed;
      }
      for (std::size_t i = 1; i < found.ranked.size() && static_cast<int>(i) <= args.top; ++i)
        print_summary(projected_result(found.ranked[i].config, found.ranked[i].projection, calibration.get(),
                                       Annotations::none),
                      "  runner-up");
      search = search_summary(found, args.top);
      cfg = found.best.config;
      proj = std::move(found.best.projection);
    } else {
      proj = project(cfg, calibration.get());
    }
    RunResult result = projected_result(cfg, proj, calibration.get());
    if (args.checkpoint_every > 0 && result.checkpoint)
      set_checkpoint_interval(*result.checkpoint, args.checkpoint_every, result.median_iteration_s());
    print_summary(result, "projected");
    if (!proj.fits) {  // the margin, by component, and the smallest change that fits
      const FitMargin margin = fit_margin(cfg, proj);
      const std::optional<FitChange> change = smallest_fitting_change(cfg, calibration.get());
      result.extra["does_not_fit"] = to_json(margin, change);
      std::printf("  does not fit: %s\n", margin_text(margin, change).c_str());
    }
    if (result.checkpoint) print_checkpoint(*result.checkpoint);
    if (result.expected_error) print_expected_error(*result.expected_error);
    if (result.sensitivity) print_sensitivity(*result.sensitivity);
    if (!search.is_null()) result.extra["search"] = search;
    if (!args.trace.empty()) result.extra["timeline"] = args.trace;
    return write_outputs(args, proj, result);
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
  sub->add_flag("--search-uneven", args->search_uneven,
                "Also try, for p >= 3, one layer off the first and last stage (plan.layers_per_stage)");
  sub->add_flag("--search-tp-overlap", args->search_tp_overlap,
                "Also try, under sequence parallelism with t > 1, plan.tp_comm_overlap");
  sub->add_option("--top", args->top, "Runners-up to report with --search")->capture_default_str();
  sub->add_option("--checkpoint-every", args->checkpoint_every,
                  "Iterations between checkpoint saves: report the share of training time saving costs")
      ->check(CLI::Range(1, 1 << 30));
  return {sub, [args] { return run(*args); }};
}

}  // namespace ptdp::cli
