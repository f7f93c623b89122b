// project(): build the programs, simulate, account the time, check memory.
#include "core/sim/projector.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "core/results/result_io.h"
#include "core/schedule/registry.h"
#include "core/sim/checkpoint_cost.h"
#include "core/sim/cost_model.h"
#include "core/sim/expected_error.h"
#include "core/sim/plan_limits.h"
#include "core/sim/sensitivity.h"

namespace ptdp {

namespace {

// Adds one rank's time by category from its simulated events; `passes` gets
// the forwards' and backwards' spans split by their cost's kinds.
void account(const PassOf& pass, const TimelineEvent& e, Breakdown& b, PassCost& passes) {
  const double span = e.end_s - e.start_s;
  const auto split = [&](const PassCost& c) {
    const double total = c.total();
    if (total <= 0) return;
    passes += (span / total) * c;
    b.compute += span * c.compute() / total;
    b.tp_comm += span * c.tp_comm / total;
    b.dp_comm += span * c.dp_comm / total;
  };
  // The field each Op's time goes to; compute ops are split above, receives
  // are waiting (counted in the bubble).
  using Field = double Breakdown::*;
  static constexpr OpTable<Field> kField = op_table<Field>(Field{},               // recv_forward
                                                           Field{},               // forward
                                                           &Breakdown::pp_comm,   // send_forward
                                                           Field{},               // recv_backward
                                                           Field{},               // backward
                                                           &Breakdown::pp_comm,   // send_backward
                                                           Field{},               // backward_input
                                                           Field{},               // backward_weight
                                                           &Breakdown::pp_comm,   // reduce_tied
                                                           &Breakdown::dp_comm,   // reduce_grads
                                                           &Breakdown::optimizer);  // optimizer_step
  const Op op = e.instr.op;
  if (is_compute(op)) split(pass(e.rank, e.instr));
  else if (const Field f = kField[op_index(op)]) b.*f += span;
}

Breakdown breakdown(const PassOf& pass, const Timeline& timeline, int p, double iteration_s, PassCost& passes) {
  Breakdown b;
  for (const auto& e : timeline) account(pass, e, b, passes);
  const double ranks = p;
  b.compute /= ranks, b.tp_comm /= ranks, b.pp_comm /= ranks, b.dp_comm /= ranks, b.optimizer /= ranks;
  passes = (1 / ranks) * passes;
  b.bubble = std::max(0.0, iteration_s - b.compute - b.tp_comm - b.pp_comm - b.dp_comm - b.optimizer);
  return b;
}

}  // namespace

ConfigErrors check_projectable(const Config& cfg) {
  ConfigErrors e;
  const std::string precision = to_string(cfg.plan.precision);
  if (cfg.machine.peak_for(precision) <= 0)
    e.push_back({"machine.peak_tflops", "machine \"" + cfg.machine.name + "\" gives no peak_tflops for \"" + precision +
                                            "\" (plan.precision): a projection needs the dense peak"});
  if (cfg.machine.memory_bandwidth_gbs <= 0)
    e.push_back({"machine.memory_bandwidth_gbs", "machine \"" + cfg.machine.name +
                                                     "\" gives no memory bandwidth: a projection needs it"});
  return e;
}

Projection project(const Config& cfg, const Calibration* calibration, ActivationFormula formula) {
  const CostModel costs(cfg, calibration);
  return project_with(cfg, costs.dims(), costs.pipeline_costs(),
                      [&costs](int rank, const Instr& in) { return costs.pass(rank, in); }, formula);
}

Projection project_with(const Config& cfg, const RankDims& dims, const PipelineCosts& costs, const PassOf& pass,
                        ActivationFormula formula) {
  const Plan& p = cfg.plan;
  if (ConfigErrors beyond = check_work_limits(cfg.model, p); !beyond.empty()) throw ConfigRefused(std::move(beyond));
  const auto programs = build_pipeline(p.schedule, p.pp, p.micro_batches(), p.virtual_stages);
  Projection out;
  out.timeline = simulate_pipeline(programs, costs);
  for (const auto& e : out.timeline) out.iteration_s = std::max(out.iteration_s, e.end_s);
  out.breakdown = breakdown(pass, out.timeline, p.pp, out.iteration_s, out.passes);
  out.bubble = pipeline_bubble(out.timeline);
  out.memory_formula = formula;
  const MemoryTraits traits = memory_traits(cfg.machine, p);
  out.memory = memory_per_stage(cfg.model, p, dims, traits, formula, programs);
  for (const auto& stage : out.memory) out.peak_bytes = std::max(out.peak_bytes, stage.total());
  out.fits = fits(cfg.machine, out.peak_bytes);
  return out;
}

RunResult projected_result(const Config& cfg, const Projection& proj, const Calibration* calibration,
                           Annotations annotations) {
  RunResult r;
  r.mode = ResultMode::projected;
  r.config = cfg;
  r.software = software_info();
  r.provenance = {{"simulator", "ptdp.sim: the instruction lists of one pipeline as discrete events"},
                  {"costs", calibration != nullptr ? "analytical model scaled by the calibration's measurements"
                                                   : "analytical model of the machine profile"},
                  {"calibration", calibration != nullptr ? nlohmann::json(calibration->name) : nlohmann::json(nullptr)}};
  if (calibration != nullptr) r.provenance["calibration_source"] = calibration->source;
  r.iteration_s = {proj.iteration_s};
  r.breakdown = proj.breakdown;
  r.bubble.simulated = proj.bubble.mean_bubble;
  r.bubble.simulated_per_stage = proj.bubble.bubble;
  r.bubble.analytical = analytical_bubble(cfg.plan);
  r.memory.formula = proj.memory_formula;
  r.memory.model_per_stage = proj.memory;
  r.memory.available = cfg.machine.memory_bytes - cfg.machine.memory_reserved_bytes;
  r.memory.fits = proj.fits;
  r.checkpoint = projected_checkpoint(cfg);
  if (annotations == Annotations::all) {
    r.expected_error = expected_error(cfg, default_validation_file());
    r.sensitivity = sensitivity(cfg, time_shares(proj.breakdown, proj.passes), proj.iteration_s, calibration);
  }
  return r;
}

void attach_projection(const Config& cfg, const Calibration* calibration, RunResult& r) {
  const ConfigErrors errors = check_projectable(cfg);
  if (!errors.empty()) {
    r.projected_error = errors.front().field + ": " + errors.front().message;
    return;
  }
  try {
    const Projection proj = project(cfg, calibration, ActivationFormula::ptdp);
    r.projected = std::make_shared<RunResult>(projected_result(cfg, proj, calibration));
  } catch (const std::runtime_error& e) {  // a calibration that cannot serve this plan
    r.projected_error = e.what();
  }
}

}  // namespace ptdp
