// Enumeration of candidate plans, projection, ranking.
#include "core/sim/search.h"

#include <algorithm>

#include "core/accounting/throughput.h"
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
  if (!c.plan.layers_per_stage.empty() && std::find(out.begin(), out.end(), c.plan.virtual_stages) == out.end())
    out.push_back(c.plan.virtual_stages);  // the base's own uneven split need not divide evenly
  if (out.empty()) out.push_back(1);
  return out;
}

// A base's explicit layers_per_stage fits its own p·v only; other shapes get the even split.
void keep_layer_split_if_fits(Config& c, const Plan& base) {
  if (c.plan.pp != base.pp || c.plan.virtual_stages != base.virtual_stages) c.plan.layers_per_stage.clear();
}

// The even split with one layer moved from the first and from the last virtual stage
// to their neighbours: those stages also run the embedding and the output head.
// Empty when the plan has a split already, p < 3, or the stages hold fewer than 2 layers.
std::vector<int> lighter_ends(const Config& c) {
  const int stages = c.plan.pp * c.plan.virtual_stages;
  if (!c.plan.layers_per_stage.empty() || c.plan.pp < 3 || c.model.layers % stages != 0) return {};
  const int n = c.model.layers / stages;
  if (n < 2) return {};
  std::vector<int> split(static_cast<std::size_t>(stages), n);
  --split.front(), --split.back();
  ++split[1], ++split[split.size() - 2];
  return split;
}

// Adds `c`, projected, to `out` when it is valid and fits; counts it in `refused` when it does not fit.
void consider(const Config& c, const Calibration* calibration, std::vector<Candidate>& out, int& refused) {
  if (!validate(c).empty() || !check_work_limits(c.model, c.plan).empty()) return;
  Projection proj = project(c, calibration);
  if (!proj.fits) {
    ++refused;
    return;
  }
  out.push_back({c, std::move(proj)});
}

// c, and c with tp_comm_overlap when the space asks for it and sequence parallelism splits t > 1.
void consider_overlap_too(const Config& c, const SearchSpace& space, const Calibration* calibration,
                          std::vector<Candidate>& out, int& refused) {
  consider(c, calibration, out, refused);
  if (!space.tp_comm_overlap || !c.plan.sequence_parallel || c.plan.tp < 2 || c.plan.tp_comm_overlap) return;
  Config ring = c;
  ring.plan.tp_comm_overlap = true;
  consider(ring, calibration, out, refused);
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
        c.plan.layers_per_stage = base.plan.layers_per_stage;
        keep_layer_split_if_fits(c, base.plan);
        consider_overlap_too(c, space, calibration, out, refused);
        if (std::vector<int> split = lighter_ends(c); space.uneven_ends && !split.empty()) {
          Config uneven = c;
          uneven.plan.layers_per_stage = std::move(split);
          consider_overlap_too(uneven, space, calibration, out, refused);
        }
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
                    {"model_tflops_per_gpu", throughput(c.config, c.projection.iteration_s).model_tflops_per_gpu}});
  }
  return {{"candidates", s.ranked.size()}, {"rejected_does_not_fit", s.rejected}, {"runners_up", list}};
}

}  // namespace ptdp
