// The regression gate's options, shared by `ptdp compare` and `ptdp history`
// so that both judge with the same rule and refuse the same bad values.
#pragma once
#include <CLI/CLI.hpp>

namespace ptdp::cli {

// --threshold PERCENT (a finite positive number) and --alpha (strictly between 0 and 1).
void add_gate_options(CLI::App& sub, double& threshold_pct, double& alpha);

}  // namespace ptdp::cli
