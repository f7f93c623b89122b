// Each mechanism off in turn, each experiment's error against the paper.
#include "core/sweep/ablation.h"

#include <chrono>
#include <cstdio>

namespace ptdp {

namespace {

// The mechanisms are the time model's: a checkpoint's size, save and load
// (metrics "checkpoint.*", Section 5.10) do not depend on them.
bool ablatable(const Sweep& s) { return s.metric.rfind("checkpoint.", 0) != 0; }

AblationRow check_all(const std::vector<Sweep>& sweeps, const Calibration* calibration, const std::string& mechanism) {
  AblationRow row{mechanism, {}};
  for (Sweep sweep : sweeps) {  // a copy: the switch is set on its points' machines
    if (!ablatable(sweep)) continue;
    if (!mechanism.empty())
      for (const MechanismSwitch& s : mechanism_switches())
        if (s.name == mechanism)
          for (SweepPoint& p : sweep.points) p.config.machine.mechanisms.*s.flag = false;
    const ExperimentCheck check = check_against_paper(sweep, calibration);
    if (!check.points.empty()) row.experiments.push_back(summarize(check));
  }
  return row;
}

nlohmann::json to_json(const ExperimentSummary& e) {
  return {{"points", e.points},
          {"mean_abs_error", e.mean_abs_error},
          {"max_abs_error", e.max_abs_error},
          {"ordering_violations", e.ordering_violations},
          {"does_not_fit", e.does_not_fit}};
}

}  // namespace

ExperimentSummary summarize(const ExperimentCheck& c) {
  return {c.name, static_cast<int>(c.points.size()), c.mean_abs_error, c.max_abs_error,
          static_cast<int>(c.ordering_violations.size()), static_cast<int>(c.unfit.size())};
}

Ablation ablate(const std::vector<Sweep>& sweeps, const Calibration* calibration) {
  const auto t0 = std::chrono::steady_clock::now();
  Ablation a;
  a.full = check_all(sweeps, calibration, "");
  for (const MechanismSwitch& s : mechanism_switches()) a.off.push_back(check_all(sweeps, calibration, s.name));
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return a;
}

nlohmann::json to_json(const Ablation& a) {
  nlohmann::json full = nlohmann::json::object(), off = nlohmann::json::array();
  for (const auto& e : a.full.experiments) full[e.name] = to_json(e);
  for (const auto& row : a.off) {
    nlohmann::json exps = nlohmann::json::object();
    for (std::size_t i = 0; i < row.experiments.size(); ++i) {
      const ExperimentSummary& e = row.experiments[i];
      exps[e.name] = to_json(e);
      exps[e.name]["change"] = e.mean_abs_error - a.full.experiments[i].mean_abs_error;
    }
    off.push_back({{"mechanism", row.mechanism}, {"experiments", exps}});
  }
  return {{"schema", "ptdp.ablation/1"}, {"full", full}, {"off", off}, {"seconds", a.seconds}};
}

// Rows: mechanisms; columns: experiments; cells: mean |error| with it off, in % (change from the full model).
void print_ablation(const Ablation& a) {
  std::printf("%-24s", "mean |error| %");
  for (const auto& e : a.full.experiments) std::printf(" %9.9s", e.name.c_str());
  std::printf("\n%-24s", "full model");
  for (const auto& e : a.full.experiments) std::printf(" %9.1f", 100 * e.mean_abs_error);
  std::printf("\n");
  for (const auto& row : a.off) {
    std::printf("%-24s", ("- " + row.mechanism).c_str());
    for (std::size_t i = 0; i < row.experiments.size(); ++i) {
      const double d = 100 * (row.experiments[i].mean_abs_error - a.full.experiments[i].mean_abs_error);
      std::printf(" %+9.1f", d);
    }
    std::printf("\n");
  }
  for (const auto& row : a.off)
    for (std::size_t i = 0; i < row.experiments.size(); ++i) {
      const ExperimentSummary &e = row.experiments[i], &f = a.full.experiments[i];
      if (e.ordering_violations != f.ordering_violations || e.does_not_fit != f.does_not_fit)
        std::printf("- %s: %s has %d ordering violations (%d with it on), %d points do not fit (%d)\n",
                    row.mechanism.c_str(), e.name.c_str(), e.ordering_violations, f.ordering_violations,
                    e.does_not_fit, f.does_not_fit);
    }
  std::printf("(rows: change in mean |error|, points, with the mechanism off; %.2f s)\n", a.seconds);
}

}  // namespace ptdp
