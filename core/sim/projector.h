// Projection of one configuration: the simulator runs the very instruction
// lists the runtime runs (core/schedule), for the p ranks of one pipeline
// (tensor- and data-parallel peers run the same list at the same times), with
// durations from the cost model. Out come the iteration time, a breakdown of
// each rank's time, the simulated bubble, the memory of every stage and whether
// it fits.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/accounting/memory_model.h"
#include "core/config/config.h"
#include "core/config/rank_dims.h"
#include "core/results/result.h"
#include "core/results/timeline.h"
#include "core/sim/calibration.h"
#include "core/sim/layer_costs.h"
#include "core/sim/pipeline_sim.h"

namespace ptdp {

struct Projection {
  double iteration_s = 0;
  Breakdown breakdown;
  PassCost passes;                     // breakdown's compute + tp_comm by kind (GEMM, attention, memory, TP)
  BubbleStats bubble;                  // simulated, per pipeline rank
  std::vector<MemoryBreakdown> memory; // per pipeline rank
  ActivationFormula memory_formula = ActivationFormula::korthikanti;  // what `memory` counts activations by
  std::int64_t peak_bytes = 0;         // largest total over the stages
  bool fits = true;
  Timeline timeline;                   // the simulated iteration of the pipeline's ranks
};

// What a projection needs beyond validate(): the machine's dense peak for the
// plan's precision and its memory bandwidth. Each missing number named.
ConfigErrors check_projectable(const Config& cfg);

// The configuration must be valid (validate() and check_projectable()); a plan
// beyond check_work_limits() (plan_limits.h) throws ConfigRefused.
// `calibration` may be null. `formula` counts the activations: by default
// Korthikanti et al.'s, for the paper's software (core/accounting/memory_model.h).
Projection project(const Config& cfg, const Calibration* calibration,
                   ActivationFormula formula = ActivationFormula::korthikanti);

// What project() does once it has its costs: simulates the plan's programs
// with `costs`, splits the time by category (`pass` gives a forward's or
// backward's compute and tensor-parallel share) and checks the modelled memory.
// `ptdp slice` calls it with measured compute costs. `dims`: the rank's sizes
// the costs were priced at (CostModel::dims()).
using PassOf = std::function<PassCost(int pp_rank, const Instr& forward_or_backward)>;
Projection project_with(const Config& cfg, const RankDims& dims, const PipelineCosts& costs, const PassOf& pass,
                        ActivationFormula formula = ActivationFormula::korthikanti);

// What a projected result carries beyond the projection's own figures: its
// expected error (the committed validation's errors for its class,
// expected_error.h) and its sensitivity (sensitivity.h, ~24 projections more),
// or neither: the validation itself, whose points those errors are.
enum class Annotations : std::uint8_t { all, none };

// The projected result ("mode": "projected"): the same type as a measured run's,
// with the breakdown; its provenance names the calibration when one was used.
RunResult projected_result(const Config& cfg, const Projection& proj, const Calibration* calibration,
                           Annotations annotations = Annotations::all);

// A measured run's projection beside it: `r.projected`, the same configuration
// projected with the memory of ptdp's own tensors (ActivationFormula::ptdp), or
// `r.projected_error`: the first number the projection lacks, or why the
// calibration (may be null) cannot serve the plan.
void attach_projection(const Config& cfg, const Calibration* calibration, RunResult& r);

}  // namespace ptdp
