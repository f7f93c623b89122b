// Sweep points through the projector (with the sweep's search when it has one).
#include "core/sweep/project_point.h"

#include "core/results/metric_path.h"
#include "core/results/result.h"
#include "core/sim/fit_margin.h"
#include "core/sim/plan_limits.h"
#include "core/sim/projector.h"
#include "core/sim/search.h"
#include "core/sweep/sweep_results.h"

namespace ptdp {

namespace {

bool searches(const Sweep& s) {
  return !s.search_micro_batches.empty() || !s.search_virtual_stages.empty() || s.search_split;
}

SearchSpace space_of(const Sweep& s, const Config& c) {
  SearchSpace space;
  space.micro_batches = s.search_micro_batches.empty() ? std::vector<int>{c.plan.micro_batch} : s.search_micro_batches;
  if (!s.search_virtual_stages.empty()) space.virtual_stages = s.search_virtual_stages;
  else space.virtual_stages = {c.plan.virtual_stages};
  space.split_tp_pp = s.search_split;
  return space;
}

}  // namespace

nlohmann::json sweep_tag(const Sweep& sweep, const SweepPoint& point) {
  return {{"name", sweep.name},   {"file", sweep.file.filename().string()}, {"point", point.index},
          {"series", point.series}, {"label", point.label},                 {"overrides", point.overrides},
          {"metric", sweep.metric}, {"paper", point.paper ? nlohmann::json(*point.paper) : nlohmann::json(nullptr)}};
}

PointOutcome project_point(const Sweep& sweep, const SweepPoint& point, const Calibration* calibration,
                           Annotations annotations) {
  PointOutcome out;
  ConfigErrors errors = point.errors.empty() ? check_projectable(point.config) : point.errors;
  if (errors.empty()) errors = check_work_limits(point.config.model, point.config.plan);
  if (!errors.empty()) {
    out.status = Outcome::refused;
    out.reason = errors.front().message;
    return out;
  }
  Config cfg = point.config;
  Projection proj;
  nlohmann::json search;
  if (searches(sweep)) {
    SearchOutcome found = project_best(cfg, space_of(sweep, cfg), calibration);
    search = search_summary(found, 0);
    cfg = found.best.config;
    proj = std::move(found.best.projection);
  } else {
    proj = project(cfg, calibration);
  }
  RunResult result = projected_result(cfg, proj, calibration, annotations);
  if (!search.is_null()) result.extra["search"] = search;
  result.extra["sweep"] = sweep_tag(sweep, point);
  std::optional<FitChange> change;
  const FitMargin margin = fit_margin(cfg, proj);
  if (!proj.fits) {
    change = smallest_fitting_change(cfg, calibration);
    result.extra["does_not_fit"] = to_json(margin, change);
  }
  out.result = to_json(result);
  if (!proj.fits) {
    out.status = Outcome::does_not_fit;
    out.reason = margin_text(margin, change);
    return out;
  }
  out.value = MetricPath(sweep.metric).of(out.result);
  out.status = out.value ? Outcome::ok : Outcome::failed;
  if (!out.value) out.reason = "the result has no metric \"" + sweep.metric + "\"";
  return out;
}

}  // namespace ptdp
