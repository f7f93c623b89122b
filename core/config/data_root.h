// Where ptdp's run-time data lives: machine profiles (sweeps/machines/), sweep
// definitions (sweeps/), the published numbers (report/reference/), the
// committed validation (results/), example configs (endtoend/configs/) and the
// plotting scripts (report/). A property of the run, not of the build, so that
// binaries built on one machine run from a tree carried to another (the GPU
// pack, docs/gpu-campaign.md).
#pragma once
#include <filesystem>

namespace ptdp {

// The data folder, first of:
//   1. $PTDP_DATA_DIR (refused, naming the variable, when it holds no sweeps/machines/);
//   2. the nearest folder above the running executable that holds
//      sweeps/machines/ and report/reference/ (a build or pack inside a checkout);
//   3. the source tree this binary was built from.
// Throws std::invalid_argument for case 1's refusal.
std::filesystem::path data_root();

// Whether `dir` holds ptdp's data (sweeps/machines/ and report/reference/).
bool holds_data(const std::filesystem::path& dir);

}  // namespace ptdp
