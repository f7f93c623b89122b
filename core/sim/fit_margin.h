// Why a plan does not fit, and what would make it fit: the bytes the most
// loaded pipeline rank needs against the device's, by component (weights,
// gradients, optimizer state, activations, and the workspace the machine
// profile reserves for the CUDA context, communication buffers and library
// workspaces), and the smallest change among the searched choices that fits.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/sim/projector.h"

namespace ptdp {

struct FitMargin {
  int pp_rank = 0;             // the pipeline rank that needs the most
  MemoryBreakdown needed;      // its weights, gradients, optimizer state and activations
  std::int64_t workspace = 0;  // machine.memory_reserved_bytes
  std::int64_t available = 0;  // machine.memory_bytes
  std::int64_t total() const { return needed.total() + workspace; }
  std::int64_t over() const { return total() - available; }  // > 0: does not fit
};
FitMargin fit_margin(const Config& cfg, const Projection& proj);

// One change of the plan that fits: the fields changed ("plan.dp_sharding":
// "gradients"), the plan and its projection.
struct FitChange {
  nlohmann::json fields;
  Config config;
  Projection projection;
};

// The changes tried, each alone, then dp_sharding with each of the others:
// dp_sharding one or two steps up (optimizer, gradients, parameters), recompute
// selective or full, a smaller micro-batch (halved down to 1), sequence
// parallelism on (t > 1), fewer virtual stages (interleaved plans: each v
// below the plan's that divides the layers). Of those that fit, the one with
// the fewest fields changed, then the shortest projected iteration. None when
// nothing tried fits.
std::optional<FitChange> smallest_fitting_change(const Config& cfg, const Calibration* calibration);

// {"pipeline_rank", "needed_bytes", "available_bytes", "over_bytes", "by_component": {"weights",
// "gradients", "optimizer", "activations", "workspace"}, "fits_with": {"change", "plan",
// "needed_bytes", "iteration_s"} | null}
nlohmann::json to_json(const FitMargin& m, const std::optional<FitChange>& change);

// "needs 95.0 GiB of 80.0 GiB (weights 5.9, gradients 11.8, ...); fits with plan.dp_sharding=gradients (71.2 GiB)"
std::string margin_text(const FitMargin& m, const std::optional<FitChange>& change);

}  // namespace ptdp
