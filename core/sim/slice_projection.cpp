// project_slice: a slice's measured compute in the simulator; slice_result:
// the result JSON; heaviest_stage: the stage worth measuring.
#include "core/sim/slice_projection.h"

#include <algorithm>
#include <memory>

#include "core/results/result.h"
#include "core/sim/cost_model.h"

namespace ptdp {

namespace {

// num/den, or 1 where the model gives the measured stage no time.
double ratio(double num, double den) { return den > 0 ? num / den : 1.0; }

}  // namespace

int heaviest_stage(const Config& cfg, const Calibration* calibration) {
  const CostModel costs(cfg, calibration);
  int best = 0;
  double best_s = -1;
  for (int r = 0; r < cfg.plan.pp; ++r) {
    double s = 0;
    for (int c = 0; c < cfg.plan.virtual_stages; ++c) s += costs.forward(r, c).total() + costs.backward(r, c).total();
    if (s > best_s) best = r, best_s = s;
  }
  return best;
}

SliceProjection project_slice(const Config& cfg, const SliceMeasurement& m, const Calibration* calibration) {
  const int k = m.stage;
  auto model = std::make_shared<const CostModel>(cfg, calibration);
  const auto measured_pass = [model, &m, k](int rank, const Instr& in) {
    const bool fwd = in.op == Op::forward;
    const PassCost& here = model->pass(rank, in);  // F, the whole backward, or its B or W share
    const PassCost& there = fwd ? model->forward(k, in.chunk) : model->backward(k, in.chunk);
    const double measured = (fwd ? m.forward_s : m.backward_s)[static_cast<std::size_t>(in.chunk)];
    PassCost c;
    c.gemm = measured * ratio(here.compute(), there.compute());  // all of the measured compute, unsplit
    c.tp_comm = here.tp_comm;
    c.dp_comm = here.dp_comm;  // ZeRO-2/3 exposure as modelled
    return c;
  };
  PipelineCosts costs = model->pipeline_costs();
  const PipelineCosts modelled = costs;
  costs.duration = [modelled, measured_pass, model, &m, k](int rank, const Instr& in) {
    if (is_compute(in.op)) return measured_pass(rank, in).total();
    if (in.op == Op::optimizer_step) return m.optimizer_s * ratio(model->optimizer(rank), model->optimizer(k));
    return modelled.duration(rank, in);
  };
  SliceProjection sp;
  sp.projection = project_with(cfg, model->dims(), costs, measured_pass, ActivationFormula::ptdp);  // the slice ran ptdp's tensors
  const auto& mem = sp.projection.memory;
  const std::int64_t measured_model = mem[static_cast<std::size_t>(k)].total();
  for (const auto& r : mem) {
    sp.rank_bytes.push_back(std::max<std::int64_t>(0, m.peak_bytes + r.total() - measured_model));
    sp.rank_fits.push_back(fits(cfg.machine, sp.rank_bytes.back()));
  }
  sp.projection.fits = std::all_of(sp.rank_fits.begin(), sp.rank_fits.end(), [](bool f) { return f; });
  return sp;
}

RunResult slice_result(const Config& cfg, const SliceOptions& options, const SliceMeasurement& m,
                       const SliceProjection& sp, const Calibration* calibration) {
  RunResult r = projected_result(cfg, sp.projection, calibration);
  r.mode = ResultMode::slice;
  r.provenance["costs"] = "forward, backward and optimizer of the measured stage (scaled to the other stages by "
                          "the model's ratio); communication from the model";
  const std::int64_t peak = *std::max_element(sp.rank_bytes.begin(), sp.rank_bytes.end());
  r.memory.peak_measured = m.peak_bytes;
  r.memory.fits = sp.projection.fits;
  r.extra["slice"] = {{"stage", m.stage},
                      {"device", device_name(options.device)},
                      {"backend", m.backend},
                      {"iterations", options.iterations},
                      {"warmup", options.warmup},
                      {"measured_iteration_s", m.iteration_s},
                      {"forward_s_per_chunk", m.forward_s},
                      {"backward_s_per_chunk", m.backward_s},
                      {"optimizer_s", m.optimizer_s},
                      {"peak_measured_bytes", m.peak_bytes},
                      {"peak_slice_bytes", peak},
                      {"rank_bytes", sp.rank_bytes},
                      {"rank_fits", sp.rank_fits}};
  if (!sp.projection.fits) {
    nlohmann::json ranks = nlohmann::json::array();
    for (std::size_t i = 0; i < sp.rank_fits.size(); ++i)
      if (!sp.rank_fits[i]) ranks.push_back(static_cast<int>(i));
    r.extra["does_not_fit"] = {{"peak_bytes", peak}, {"available_bytes", r.memory.available}, {"pipeline_ranks", ranks}};
  }
  return r;
}

RunResult slice_out_of_memory_result(const Config& cfg, const SliceOptions& options, const std::string& why,
                                     const Calibration* calibration) {
  Projection proj = project(cfg, calibration, ActivationFormula::ptdp);
  proj.fits = false;
  RunResult r = projected_result(cfg, proj, calibration);
  r.mode = ResultMode::slice;
  r.provenance["costs"] = "analytical model only: the measured stage ran out of memory on this device";
  r.extra["slice"] = {{"stage", options.stage}, {"device", device_name(options.device)}, {"out_of_memory", why}};
  r.extra["does_not_fit"] = {{"peak_bytes", nullptr}, {"available_bytes", r.memory.available},
                             {"pipeline_ranks", {options.stage}}, {"out_of_memory", why}};
  return r;
}

}  // namespace ptdp
