// The stated range of every numeric option of train, sweep and accept, checked
// by CLI11 while the command line is parsed: a value outside it (negative,
// wrapped around, NaN, infinite, absurdly large, or not a number at all) is
// refused with exit 2 naming the option, before anything runs. The range is
// shown in --help beside the option.
#pragma once
#include <cstdint>

#include <CLI/CLI.hpp>

#include "core/config/bounds.h"

namespace ptdp::cli {

// Iterations of a run (--iterations, --warmup, --save-every) and checkpoints kept (--keep).
inline constexpr std::int64_t kMaxIterations = 1'000'000;
// Seconds any one communication may wait (--comm-timeout): up to a day.
inline constexpr double kMinCommTimeoutS = 0.001, kMaxCommTimeoutS = 86'400;
// Seconds one sweep point may take (--timeout): up to a week, Slurm's limit of an emitted job included.
inline constexpr double kMinPointTimeoutS = 1, kMaxPointTimeoutS = 7 * 86'400;
// Projections run at once (--jobs).
inline constexpr std::int64_t kMaxJobs = 256;
// Points a sweep may expand to (--max-points), and so any point index.
inline constexpr std::int64_t kMaxSweepPointsLimit = 1'000'000;
// Milliseconds a testing aid may make a point wait (--point-delay-ms, --delay-ms): an hour.
inline constexpr std::int64_t kMaxDelayMs = 3'600'000;
// Nodes `ptdp accept` runs its cross-node steps on (--nodes).
inline constexpr std::int64_t kMaxAcceptNodes = 65'536;

// An integer in [lowest, highest], written in base 10.
CLI::Validator integer_in(std::int64_t lowest, std::int64_t highest);
// A finite number in [lowest, highest].
CLI::Validator number_in(double lowest, double highest);

}  // namespace ptdp::cli
