// `ptdp validate`: projects every paper experiment that has published values
// (sweeps/*.json with a "reference") and prints, per experiment, paper vs
// projected with the error and any ordering the projection gets wrong; writes
// the same as JSON for the report. `--set modern` does the same for the modern
// set (sweeps/modern/*.json against report/reference/modern-runs.json: one
// experiment per published source) and adds the figures over the whole set.
// `--set memory` holds ptdp's memory model against published per-GPU memory
// figures (sweeps/memory/*.json against report/reference/memory-runs.json):
// each figure beside the model's same part, its error, and why it differs.
#include <cstdio>
#include <algorithm>
#include <memory>

#include "core/config/data_root.h"
#include "core/results/result_io.h"
#include "core/sweep/ablation.h"
#include "core/sweep/memory_check.h"
#include "core/sweep/modern_check.h"
#include "core/sweep/paper_check.h"
#include "endtoend/cli_common.h"
#include "endtoend/commands.h"

namespace ptdp::cli {

namespace {

struct ValidateArgs {
  std::vector<std::string> sweeps;
  std::string set = "paper";  // paper | modern | memory
  std::string out, calibration;
  bool quiet = false, ablate = false;
};

bool modern(const ValidateArgs& args) { return args.set == "modern"; }

std::vector<std::filesystem::path> set_sweeps(const ValidateArgs& args) {
  std::vector<std::filesystem::path> files(args.sweeps.begin(), args.sweeps.end());
  if (!files.empty()) return files;
  if (modern(args)) return modern_sweep_files();
  for (const auto& e : std::filesystem::directory_iterator(data_root() / "sweeps"))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// `published`: the word for the source's value ("paper" for the SC21 set).
void print_check(const ExperimentCheck& c, bool quiet, const char* published) {
  std::printf("%s — %s\n", c.name.c_str(), c.reproduces.c_str());
  if (!quiet)
    for (const auto& p : c.points)
      std::printf("  %-26s %-14s %s %8.2f  projected %8.2f  %+6.1f%%%s\n", p.series.c_str(), p.label.c_str(), published,
                  p.paper, p.projected, 100 * p.error,
                  p.status == Outcome::does_not_fit ? "  (compared; does not fit in ptdp's memory model)" : "");
  for (const auto& u : c.unfit) std::printf("  does not fit: %s\n", u.c_str());
  for (const auto& r : c.refused) std::printf("  refused: %s\n", r.c_str());
  for (const auto& v : c.ordering_violations) std::printf("  ORDER differs from the paper: %s\n", v.c_str());
  if (c.points.empty()) {
    std::printf("%s: no point has a published value to compare (derived in the report)\n\n", c.name.c_str());
    return;
  }
  // Named, so each experiment's verdict reads on its own line (grep, --quiet).
  std::printf("%s: %zu points, mean |error| %.1f%%, max %.1f%%, %zu ordering violations (%.2f s)\n\n", c.name.c_str(),
              c.points.size(), 100 * c.mean_abs_error, 100 * c.max_abs_error, c.ordering_violations.size(), c.seconds);
}

void print_set(const std::vector<ExperimentCheck>& checks) {
  const SetSummary s = summarize_set(checks);
  std::printf("modern set: %zu runs from %zu sources, mean |error| %.1f%%, max %.1f%%\n", s.points, s.sources,
              100 * s.mean_abs_error, 100 * s.max_abs_error);
}

int run_ablation(const std::vector<Sweep>& sweeps, const Calibration* calibration, const std::string& out) {
  const Ablation a = ablate(sweeps, calibration);
  print_ablation(a);
  nlohmann::json j = to_json(a);
  j["software"] = software_info();
  j["calibration"] = calibration ? nlohmann::json(calibration->name) : nlohmann::json(nullptr);
  if (!out.empty()) write_json_atomic(out, j);
  return kExitOk;
}

void print_memory_check(const MemorySourceCheck& c, bool quiet) {
  std::printf("%s — %s\n", c.name.c_str(), c.reproduces.c_str());
  if (!quiet)
    for (const auto& p : c.points)
      std::printf("  %-26s %-26s published %10.4g  modelled %10.4g  memory error %+6.1f%%%s%s\n", p.run.id.c_str(),
                  to_string(p.run.scope).c_str(), p.run.value, p.modelled, 100 * p.error,
                  p.run.pending.empty() ? "" : "  (pending: ", p.run.pending.empty() ? "" : (p.run.pending + ")").c_str());
  for (const auto& r : c.refused) std::printf("  refused: %s\n", r.c_str());
  const MemoryErrors e = memory_errors({c}, true);
  std::printf("%s: %zu points, mean |memory error| %.1f%%, max %.1f%%\n\n", c.name.c_str(), e.points,
              100 * e.mean_abs_error, 100 * e.max_abs_error);
}

// `--set memory`: every published memory figure against the model; the JSON for the report.
// A malformed sweep or reference throws (SweepRefused, JsonRefused), refused by run().
int run_memory(const ValidateArgs& args) {
  const std::vector<MemorySourceCheck> checks = check_memory_set();
  for (const MemorySourceCheck& c : checks) print_memory_check(c, args.quiet);
  const MemoryErrors all = memory_errors(checks, true), modelled = memory_errors(checks, false);
  std::printf("memory set: %zu figures from %zu sources, mean |memory error| %.1f%%, max %.1f%%; "
              "without pending mechanisms: %zu figures, mean %.1f%%, max %.1f%%\n",
              all.points, checks.size(), 100 * all.mean_abs_error, 100 * all.max_abs_error, modelled.points,
              100 * modelled.mean_abs_error, 100 * modelled.max_abs_error);
  nlohmann::json out = {{"schema", "ptdp.validation/1"}, {"mode", "projected"}, {"software", software_info()}};
  out.update(memory_set_json(checks));
  if (!args.out.empty()) write_json_atomic(args.out, out);
  return kExitOk;
}

int run(const ValidateArgs& args) {
  if (const ConfigErrors bad = check_outputs({{"--out", args.out}}); !bad.empty()) {
    print_refused("validate", bad);
    return kExitRefused;
  }
  if (args.set == "memory" && (!args.sweeps.empty() || args.ablate)) {
    print_refused("validate", {{args.ablate ? "--ablate" : "sweeps",
                                "--set memory checks its own sweeps (sweeps/memory/*.json) and has no ablation"}});
    return kExitRefused;
  }
  std::unique_ptr<Calibration> calibration;
  nlohmann::json all = nlohmann::json::array();
  std::vector<ExperimentCheck> checks;
  try {
    if (args.set == "memory") return run_memory(args);
    if (!args.calibration.empty()) calibration = std::make_unique<Calibration>(Calibration::load(args.calibration));
    const nlohmann::json reference =
        modern(args) ? load_reference_experiments(modern_reference_file()) : load_reference_experiments();
    std::vector<Sweep> sweeps;
    for (const auto& file : set_sweeps(args)) {
      Sweep sweep = load_sweep(file, default_machines_dir(), &reference);
      if (!sweep.reference.empty() && sweep.mode != SweepMode::measure) sweeps.push_back(std::move(sweep));
    }
    if (args.ablate) return run_ablation(sweeps, calibration.get(), args.out);
    for (const Sweep& sweep : sweeps) {
      checks.push_back(check_against_paper(sweep, calibration.get(),
                                           modern(args) ? UnfitPoints::compare : UnfitPoints::skip));
      print_check(checks.back(), args.quiet, modern(args) ? "published" : "paper");
      all.push_back(to_json(checks.back()));
    }
    if (modern(args)) print_set(checks);
  } catch (const SweepRefused& e) {
    for (const auto& p : e.problems()) std::fprintf(stderr, "ptdp validate: %s\n", p.c_str());
    return kExitRefused;
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "ptdp validate: %s\n", e.what());
    return kExitRefused;
  }
  nlohmann::json out = {{"schema", "ptdp.validation/1"}, {"mode", "projected"}, {"software", software_info()},
                        {"calibration", calibration ? nlohmann::json(calibration->name) : nlohmann::json(nullptr)},
                        {"experiments", all}};
  if (modern(args)) out.update(modern_set_json(checks));  // each source's check with its source, the set's figures
  if (!args.out.empty()) write_json_atomic(args.out, out);
  return kExitOk;
}

}  // namespace

Command add_validate_command(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* sub = app.add_subcommand("validate", "Project the paper's experiments (or, --set modern, published runs "
                                                 "from other sources) and compare with the published numbers (error "
                                                 "per point, ordering, per experiment).");
  sub->add_option("sweeps", args->sweeps, "Sweep files (default: the set's: sweeps/*.json with a reference, or "
                                          "sweeps/modern/*.json)");
  sub->add_option("--set", args->set, "Which published runs: paper (the SC21 paper's experiments) or modern "
                                      "(runs from other sources: report/reference/modern-runs.json) or memory (published per-GPU "
                                      "memory figures against the memory model: report/reference/memory-runs.json)")
      ->check(CLI::IsMember({"paper", "modern", "memory"}));
  sub->add_option("--out", args->out, "Write the comparison as JSON (for the report)");
  sub->add_option("--calibration", args->calibration, "Calibration table from `ptdp calibrate`")->check(CLI::ExistingFile);
  sub->add_flag("--quiet", args->quiet, "Print only each experiment's summary");
  sub->add_flag("--ablate", args->ablate, "Switch each modelled mechanism off in turn and report how each "
                                          "experiment's error changes (--out: the JSON)");
  return {sub, [args] { return run(*args); }};
}

}  // namespace ptdp::cli
