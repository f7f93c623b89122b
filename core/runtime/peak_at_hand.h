// The CPU's peak and bandwidth measured on the machine at hand, for MFU: a
// fixed fp32 GEMM through the CPU backend's BLAS and a streaming triad (well
// under a second), cached per CPU model, core and thread count
// (core/config/peak_cache.h). PTDP_MEASURE_PEAK=0 turns the measuring off for
// reproducible figures: the profile's peak is used, and the result names the
// CPU the profile was measured on.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/comm/communicator.h"
#include "core/config/hardware.h"
#include "core/config/peak_cache.h"

namespace ptdp {

// The environment variable that turns the measuring on ("1", or unset) and off ("0").
inline constexpr const char* kMeasurePeakVariable = "PTDP_MEASURE_PEAK";

// Whether `value` (PTDP_MEASURE_PEAK's, nullptr when unset) asks for the
// measuring; nothing when it is neither unset, "0" nor "1".
std::optional<bool> measure_peak_setting(const char* value);

// This process's rates, measured now: the best of a few 1024³ fp32 GEMMs
// (cpu::linear_forward, the backend's BLAS call) and of a few triads over
// three 64 MiB arrays; `cpu` and `cores` say what they were measured on.
MeasuredPeak measure_cpu_peak(const std::string& cpu, int cores);

// The peak of the CPU at hand for every rank of `world` (collective): rank 0's
// cached record when it holds this machine's, else measured by every rank at
// once (the best rates kept: each rank is a "GPU" of the run) and cached by
// rank 0. A cache that cannot be read or written is a warning appended to
// `warnings`, never a failure.
MeasuredPeak cpu_peak_at_hand(const Hardware& hw, Communicator& world, std::vector<std::string>& warnings);

}  // namespace ptdp
