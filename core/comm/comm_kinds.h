// The names of recorded communication: which process group, and which
// collective (core/comm/collective.h). Vocabulary shared by the recording
// communicator and the timeline (core/results/timeline.h), so the timeline
// needs no communicator.
#pragma once
#include <cstdint>

#include "core/comm/collective.h"

namespace ptdp {

enum class CommGroup : std::uint8_t { none, tp, dp, pp, model_parallel, embedding };
const char* comm_group_name(CommGroup g);  // defined in recording_communicator.cpp

}  // namespace ptdp
