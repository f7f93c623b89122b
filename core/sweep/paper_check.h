// Holding projections against the paper: every point of a sweep with a
// published value is projected, its relative error taken, and the ordering of
// the paper's configurations checked: within a series, any two points whose
// published values differ by more than kOrderingMargin must come out in the
// same order.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/process/outcome.h"
#include "core/sim/calibration.h"
#include "core/sweep/sweep.h"

namespace ptdp {

inline constexpr double kOrderingMargin = 0.05;

struct PointCheck {
  std::string series, label;
  Outcome status = Outcome::ok;  // does_not_fit: compared under UnfitPoints::compare
  double paper = 0, projected = 0;
  double error = 0;  // (projected − paper) / paper
  nlohmann::json plan;
  nlohmann::json error_class;  // the projection's class for expected errors (core/sim/expected_error.h)
};

struct ExperimentCheck {
  std::string name, reproduces, metric;
  std::string reference;           // the sweep's experiment id in its reference document
  std::vector<PointCheck> points;  // the points with a published value and a projection
  std::vector<std::string> unfit;  // points flagged does_not_fit (label, series, bytes)
  std::vector<std::string> refused;  // points whose plan breaks a rule (label, series, reason)
  double mean_abs_error = 0, max_abs_error = 0;
  std::vector<std::string> ordering_violations;
  double seconds = 0;  // wall time of the projections
};

// Whether a point that ptdp's memory model says does not fit is compared all the same
// (its iteration time is projected either way): the paper set skips them (listed in
// `unfit`); the modern set compares them, its sources having run them, and marks them.
enum class UnfitPoints : std::uint8_t { skip, compare };

ExperimentCheck check_against_paper(const Sweep& sweep, const Calibration* calibration,
                                    UnfitPoints unfit = UnfitPoints::skip);
nlohmann::json to_json(const ExperimentCheck& check);

}  // namespace ptdp
