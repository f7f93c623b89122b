// Enumeration of candidate plans, projection, ranking.
#include "core/sim/search.h"

#include <algorithm>

#include "core/schedule/registry.h"
#include "core/sim/plan_limits.h"

namespace ptdp {

namespace {

std::vector<std::pair<int, int>> splits(const Config& base, bool all) {
  if (!all) return {{base.plan.tp, base.plan.pp}};
  std::vector<std::pair<int, int>> out;
  const int mp = base.plan.tp * base.plan.pp;
  for (int t = 1; t <= mp; ++t)
    if (mp % t == 0) out.push_back({t, mp / t});
  return out;
}

std::vector<int> virtual_stage_choices(const Config& c, const std::vector<int>& candidates) {
  const ScheduleInfo* info = find_schedule(c.plan.schedule);
  if (info == nullptr || !info->interleaved) return {c.plan.virtual_stages};
  std::vector<int> out;
  for (int v : candidates)
    if (v >= 2 && c.model.layers % (c.plan.pp * v) == 0) out.push_back(v);
  if (out.empty()) out.push_back(1);
  return out;
}

}  // namespace

std::vector<Candidate> search_plans(const Config& base, const SearchSpace& space, const Calibration* calibration,
                                    int* rejected) {
  std::vector<Candidate> out;
  int refused = 0;
  for (const auto& [t, p] : splits(base, space.split_tp_pp))
    for (int b : space.micro_batches) {
      Config c = base;
      c.plan.tp = t, c.plan.pp = p, c.plan.micro_batch = b;
      for (int v : virtual_stage_choices(c, space.virtual_stages)) {
        c.plan.virtual_stages = v;
        if (!validate(c).empty() || !check_work_limits(c.model, c.plan).empty()) continue;
        Projection proj = project(c, calibration);
        if (!proj.fits) {
          ++refused;
          continue;
        }
        out.push_back({c, std::move(proj)});
      }
    }
  std::sort(out.begin(), out.end(),
            [](const Candidate& a, const Candidate& b) { return a.projection.iteration_s < b.projection.iteration_s; });
  if (rejected != nullptr) *rejected = refused;
  return out;
}

SearchOutcome project_best(const Config& base, const SearchSpace& space, const Calibration* calibration) {
  SearchOutcome out;
  out.ranked = search_plans(base, space, calibration, &out.rejected);
  out.found = !out.ranked.empty();
  out.best = out.found ? out.ranked.front() : Candidate{base, project(base, calibration)};
  return out;
}

nlohmann::json search_summary(const SearchOutcome& s, int top) {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 1; i < s.ranked.size() && static_cast<int>(i) <= top; ++i) {
    const Candidate& c = s.ranked[i];
    list.push_back({{"plan", to_json(c.config.plan)},
                    {"iteration_s", c.projection.iteration_s},
                    {"model_tflops_per_gpu", model_tflops_per_gpu(c.config, c.projection.iteration_s)}});
  }
  return {{"candidates", s.ranked.size()}, {"rejected_does_not_fit", s.rejected}, {"runners_up", list}};
}

}  // namespace ptdp
