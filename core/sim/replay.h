// Costs taken from a measured timeline: each pipeline rank's mean forward and
// backward time per chunk and mean send time, so the simulator can replay a
// measured run's schedule and its simulated bubble be held against the
// measured one (the same instruction lists, durations measured instead of modelled).
#pragma once
#include "core/results/timeline.h"
#include "core/sim/pipeline_sim.h"

namespace ptdp {

// `measured` holds the events of the first rank of each stage (world rank r·t·d
// for stage r); `stage_of` maps a world rank to its pipeline stage (-1: ignore).
PipelineCosts costs_from_timeline(const Timeline& measured, int p, const std::function<int(int)>& stage_of);

}  // namespace ptdp
