// Projecting one sweep point: the plan as given, or the best of the sweep's
// search among plans that fit; the outcome carries the result JSON (tagged with
// the sweep, the point and the published value) and the figure compared.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/process/outcome.h"
#include "core/sim/calibration.h"
#include "core/sim/projector.h"
#include "core/sweep/sweep.h"

namespace ptdp {

struct PointOutcome {
  Outcome status = Outcome::failed;  // ok, does_not_fit, refused or failed
  std::string reason;                // why, when not ok (does_not_fit: the margin, fit_margin.h's margin_text)
  std::optional<double> value;  // the sweep's metric, when ok
  nlohmann::json result;        // the projected result (also for does_not_fit, with its "does_not_fit" margin)
};

// `annotations`: whether the result carries expected error and sensitivity (projector.h).
PointOutcome project_point(const Sweep& sweep, const SweepPoint& point, const Calibration* calibration,
                           Annotations annotations = Annotations::all);

// {"name", "file", "point", "series", "label", "overrides", "paper"}: where a result came from.
nlohmann::json sweep_tag(const Sweep& sweep, const SweepPoint& point);

}  // namespace ptdp
