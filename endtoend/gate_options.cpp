// --threshold and --alpha with validators that name the bad value.
#include "endtoend/gate_options.h"

#include <cmath>
#include <string>

namespace ptdp::cli {

void add_gate_options(CLI::App& sub, double& threshold_pct, double& alpha) {
  sub.add_option("--threshold", threshold_pct, "Allowed drop of TFLOP/s or growth of iteration time, in percent")
      ->check(CLI::Validator(
          [](const std::string& text) {
            double v = 0;  // NaN and infinity pass CLI::PositiveNumber; a gate needs a real bound
            if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) || v <= 0)
              return "must be a finite positive number of percent (got " + text + ")";
            return std::string();
          },
          "POSITIVE"))
      ->capture_default_str();
  sub.add_option("--alpha", alpha, "Significance level of the noise test (one-sided Mann-Whitney U)")
      ->check(CLI::Validator(
          [](const std::string& text) {
            double v = 0;
            if (!CLI::detail::lexical_cast(text, v) || !(v > 0 && v < 1))
              return "must be a number between 0 and 1 (got " + text + ")";
            return std::string();
          },
          "(0,1)"))
      ->capture_default_str();
}

}  // namespace ptdp::cli
