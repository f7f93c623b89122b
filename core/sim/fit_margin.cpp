// The does_not_fit verdict's margin and the smallest change that fits.
#include "core/sim/fit_margin.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/schedule/registry.h"
#include "core/sim/plan_limits.h"

namespace ptdp {

namespace {

// One field's candidate values for `p`: a change each (field name, JSON value, how to apply it).
struct Change {
  nlohmann::json fields;
  Plan plan;
};

std::vector<Change> single_changes(const Model& m, const Plan& p) {
  std::vector<Change> out;
  const auto add = [&](const char* key, const nlohmann::json& value, Plan changed) {
    out.push_back({{{key, value}}, std::move(changed)});
  };
  for (const DpSharding s : {DpSharding::optimizer, DpSharding::gradients, DpSharding::parameters})
    if (s > p.dp_sharding && p.dp > 1) {
      Plan c = p;
      c.dp_sharding = s;
      add("plan.dp_sharding", to_string(s), c);
    }
  for (const Recompute r : {Recompute::selective, Recompute::full})
    if (r > p.recompute) {
      Plan c = p;
      c.recompute = r;
      add("plan.recompute", to_string(r), c);
    }
  for (int b = p.micro_batch / 2; b >= 1; b /= 2) {
    Plan c = p;
    c.micro_batch = b;
    add("plan.micro_batch", b, c);
  }
  if (!p.sequence_parallel && p.tp > 1) {
    Plan c = p;
    c.sequence_parallel = true;
    add("plan.sequence_parallel", true, c);
  }
  const ScheduleInfo* info = find_schedule(p.schedule);
  if (info != nullptr && info->interleaved)
    for (int v = p.virtual_stages - 1; v >= 2; --v)
      if (m.layers % (p.pp * v) == 0) {
        Plan c = p;
        c.virtual_stages = v;
        c.layers_per_stage.clear();
        add("plan.virtual_stages", v, c);
      }
  return out;
}

// dp_sharding's changes combined with each of the others.
std::vector<Change> paired_changes(const std::vector<Change>& singles) {
  std::vector<Change> out;
  for (const Change& s : singles) {
    if (!s.fields.contains("plan.dp_sharding")) continue;
    for (const Change& o : singles) {
      if (o.fields.contains("plan.dp_sharding")) continue;
      Change c = o;
      c.plan.dp_sharding = s.plan.dp_sharding;
      c.fields.update(s.fields);
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::optional<FitChange> best_fitting(const Config& cfg, const std::vector<Change>& changes,
                                      const Calibration* calibration) {
  std::optional<FitChange> best;
  for (const Change& ch : changes) {
    Config c = cfg;
    c.plan = ch.plan;
    if (!validate(c).empty() || !check_work_limits(c.model, c.plan).empty()) continue;
    Projection proj = project(c, calibration);
    if (!proj.fits || (best && best->projection.iteration_s <= proj.iteration_s)) continue;
    best = FitChange{ch.fields, std::move(c), std::move(proj)};
  }
  return best;
}

double gib(std::int64_t bytes) { return static_cast<double>(bytes) / (1 << 30); }

}  // namespace

FitMargin fit_margin(const Config& cfg, const Projection& proj) {
  FitMargin m;
  for (std::size_t r = 0; r < proj.memory.size(); ++r)
    if (proj.memory[r].total() > proj.memory[static_cast<std::size_t>(m.pp_rank)].total()) m.pp_rank = static_cast<int>(r);
  if (!proj.memory.empty()) m.needed = proj.memory[static_cast<std::size_t>(m.pp_rank)];
  m.workspace = cfg.machine.memory_reserved_bytes;
  m.available = cfg.machine.memory_bytes;
  return m;
}

std::optional<FitChange> smallest_fitting_change(const Config& cfg, const Calibration* calibration) {
  const std::vector<Change> singles = single_changes(cfg.model, cfg.plan);
  if (auto one = best_fitting(cfg, singles, calibration)) return one;
  return best_fitting(cfg, paired_changes(singles), calibration);
}

nlohmann::json to_json(const FitMargin& m, const std::optional<FitChange>& change) {
  nlohmann::json fits_with = nullptr;
  if (change)
    fits_with = {{"change", change->fields},
                 {"plan", to_json(change->config.plan)},
                 {"needed_bytes", change->projection.peak_bytes + m.workspace},
                 {"iteration_s", change->projection.iteration_s}};
  return {{"pipeline_rank", m.pp_rank},
          {"needed_bytes", m.total()},
          {"available_bytes", m.available},
          {"over_bytes", m.over()},
          {"by_component",
           {{"weights", m.needed.params},
            {"gradients", m.needed.grads},
            {"optimizer", m.needed.optimizer},
            {"activations", m.needed.activations},
            {"workspace", m.workspace}}},
          {"fits_with", fits_with}};
}

std::string margin_text(const FitMargin& m, const std::optional<FitChange>& change) {
  char line[512];
  std::snprintf(line, sizeof line,
                "pipeline rank %d needs %.1f GiB of %.1f GiB (weights %.1f, gradients %.1f, optimizer %.1f, "
                "activations %.1f, workspace %.1f): %.1f GiB over",
                m.pp_rank, gib(m.total()), gib(m.available), gib(m.needed.params), gib(m.needed.grads),
                gib(m.needed.optimizer), gib(m.needed.activations), gib(m.workspace), gib(m.over()));
  std::string out = line;
  if (!change) return out + "; no single searched change (dp_sharding, recompute, micro_batch, sequence_parallel, "
                            "virtual_stages, or dp_sharding with one other) fits";
  std::string fields;
  for (const auto& [key, value] : change->fields.items()) fields += (fields.empty() ? "" : ", ") + key + "=" + value.dump();
  std::snprintf(line, sizeof line, "; fits with %s (%.1f GiB, %.4g s/iteration)", fields.c_str(),
                gib(change->projection.peak_bytes + m.workspace), change->projection.iteration_s);
  return out + line;
}

}  // namespace ptdp
