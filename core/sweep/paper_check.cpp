// Projection errors and ordering against the published values.
#include "core/sweep/paper_check.h"

#include <chrono>
#include <cmath>
#include <map>

#include "core/results/metric_path.h"
#include "core/sim/expected_error.h"
#include "core/sweep/project_point.h"
#include "core/sweep/sweep_results.h"

namespace ptdp {

namespace {

void check_ordering(ExperimentCheck& c) {
  std::map<std::string, std::vector<const PointCheck*>> series;
  for (const auto& p : c.points) series[p.series].push_back(&p);
  for (const auto& [name, points] : series)
    for (std::size_t i = 0; i < points.size(); ++i)
      for (std::size_t j = i + 1; j < points.size(); ++j) {
        const PointCheck &a = *points[i], &b = *points[j];
        if (std::abs(a.paper - b.paper) <= kOrderingMargin * std::min(a.paper, b.paper)) continue;
        if ((a.paper < b.paper) != (a.projected < b.projected))
          c.ordering_violations.push_back(name + ": " + a.label + " vs " + b.label);
      }
}

// The configuration projected: the sweep's point with the plan a search chose.
Config projected_config(Config cfg, const nlohmann::json& result) {
  const nlohmann::json& plan = result["plan"];
  cfg.plan.tp = plan["tp"], cfg.plan.pp = plan["pp"], cfg.plan.dp = plan["dp"];
  return cfg;
}

// The figure compared: the metric of a point that fits, and with UnfitPoints::compare
// also that of one ptdp's memory model says does not fit (its time is projected all the same).
std::optional<double> compared_value(const Sweep& sweep, const PointOutcome& o, UnfitPoints unfit) {
  if (o.status == Outcome::ok) return o.value;
  if (o.status == Outcome::does_not_fit && unfit == UnfitPoints::compare) return MetricPath(sweep.metric).of(o.result);
  return std::nullopt;
}

}  // namespace

ExperimentCheck check_against_paper(const Sweep& sweep, const Calibration* calibration, UnfitPoints unfit) {
  ExperimentCheck c;
  c.name = sweep.name, c.reproduces = sweep.reproduces, c.metric = sweep.metric, c.reference = sweep.reference;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& point : sweep.points) {
    // Bare results: the expected errors are what this check produces.
    const PointOutcome o = project_point(sweep, point, calibration, Annotations::none);
    if (o.status == Outcome::does_not_fit) c.unfit.push_back(point.series + " " + point.label + ": " + o.reason);
    if (o.status == Outcome::refused) c.refused.push_back(point.series + " " + point.label + ": " + o.reason);
    const std::optional<double> value = compared_value(sweep, o, unfit);
    if (!point.paper || *point.paper == 0 || !value) continue;  // no relative error against 0
    PointCheck p{point.series, point.label, o.status, *point.paper, *value, 0, o.result["plan"],
                 to_json(error_class(projected_config(point.config, o.result)))};
    p.error = (p.projected - p.paper) / p.paper;
    c.points.push_back(p);
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& p : c.points) {
    c.mean_abs_error += std::abs(p.error) / static_cast<double>(c.points.size());
    c.max_abs_error = std::max(c.max_abs_error, std::abs(p.error));
  }
  check_ordering(c);
  return c;
}

nlohmann::json to_json(const ExperimentCheck& c) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : c.points)
    points.push_back({{"series", p.series}, {"label", p.label}, {"paper", p.paper}, {"projected", p.projected},
                      {"error", p.error}, {"plan", p.plan}, {"class", p.error_class}});
  for (std::size_t i = 0; i < c.points.size(); ++i)  // only under UnfitPoints::compare
    if (c.points[i].status == Outcome::does_not_fit) points[i]["fits"] = false;
  return {{"name", c.name},
          {"reproduces", c.reproduces},
          {"metric", c.metric},
          {"points", points},
          {"does_not_fit", c.unfit},
          {"refused", c.refused},
          {"mean_abs_error", c.mean_abs_error},
          {"max_abs_error", c.max_abs_error},
          {"ordering_margin", kOrderingMargin},
          {"ordering_violations", c.ordering_violations},
          {"seconds", c.seconds}};
}

}  // namespace ptdp
