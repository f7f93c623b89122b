// Bounds on the work a plan asks of ptdp itself, checked before any is done:
// the instruction lists of one pipeline (the runtime and the simulator build
// them alike; the simulation keeps an event per instruction) and the memory
// model's byte counts. Past them `ptdp train`, `ptdp project` and a sweep's
// points refuse the plan, naming the bound, instead of allocating for minutes
// and ending in std::bad_alloc.
#pragma once
#include <cstdint>
#include <string>

#include "core/config/config.h"

namespace ptdp {

// Instructions of one pipeline: a projection of 1.7·10^6 (t8 p12 v2, m = 12000)
// with its sensitivity analysis (25 simulations) took 8 s and 510 MB on one
// core of the CI machine, so this bound keeps one under about 10 s and 600 MB.
inline constexpr std::int64_t kMaxPipelineInstructions = 2'000'000;

// 2^62 bytes: beyond every device by far, and where int64 byte counts
// (memory_model.h) would come close to overflowing.
inline constexpr long double kMaxModelBytes = 4611686018427387904.0L;

// m = B/(b·d), in 64 bits (Plan::micro_batches() multiplies b·d in int).
std::int64_t micro_batches64(const Plan& p);

// Every bound that (m, p) breaks, each naming the bound and the plan's figure:
// the sizes the int fields derive (padded vocabulary, 4·hidden, t·p·d) fit an
// int, the memory model's counts stay below kMaxModelBytes, and one
// pipeline's instructions below kMaxPipelineInstructions. Needs a plan that
// validate() accepted.
ConfigErrors check_work_limits(const Model& m, const Plan& p);

// "1.2 GiB": bytes for a message.
std::string gib_text(long double bytes);

}  // namespace ptdp
