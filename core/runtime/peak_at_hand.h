// The CPU's peak and bandwidth measured on the machine at hand, for MFU: the
// best of a few fp32 GEMM shapes through the CPU backend's BLAS and a streaming
// triad (well under a second), cached per CPU model, core and thread count
// (core/config/peak_cache.h). PTDP_MEASURE_PEAK=0 turns the measuring off for
// reproducible figures: the profile's peak is used, and the result names the
// CPU the profile was measured on. PTDP_MEASURE_PEAK=again measures anew and
// caches the best rates of the new and the cached measurement: a first
// measurement taken on a busy machine is raised, never lowered.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/comm/communicator.h"
#include "core/config/hardware.h"
#include "core/config/peak_cache.h"

namespace ptdp {

// The environment variable that says where the CPU's peak comes from.
inline constexpr const char* kMeasurePeakVariable = "PTDP_MEASURE_PEAK";

// Where the CPU's peak comes from: the machine profile ("0"), a measurement
// here, cached ("1", or unset), or a measurement now, kept with the cached
// one's best rates ("again").
enum class PeakSetting { profile, measured, again };

// PTDP_MEASURE_PEAK's `value` (nullptr when unset) read; nothing when it is
// none of unset, "0", "1" and "again".
std::optional<PeakSetting> peak_setting(const char* value);

// This process's rates, measured now: the best of a few fp32 GEMMs of a set
// of shapes (cpu::gemm, the backend's BLAS call) and of a few triads over
// three 64 MiB arrays; `cpu` and `cores` say what they were measured on.
MeasuredPeak measure_cpu_peak(const std::string& cpu, int cores);

// The peak of the CPU at hand for every rank of `world` (collective): rank 0's
// cached record when it holds this machine's (and `setting` is not again),
// else measured by every rank at once (the best rates kept: each rank is a
// "GPU" of the run), with again the cached record's best rates kept too, and
// cached by rank 0. A cache that cannot be read or written is a warning
// appended to `warnings`, never a failure.
MeasuredPeak cpu_peak_at_hand(const Hardware& hw, Communicator& world, PeakSetting setting,
                              std::vector<std::string>& warnings);

}  // namespace ptdp
