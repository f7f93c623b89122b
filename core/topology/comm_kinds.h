// The names of recorded communication: which process group, and which
// collective (core/topology/collective.h). Vocabulary shared by the recording
// communicator and the timeline (core/results/timeline.h), so the timeline
// needs no communicator.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/topology/collective.h"

namespace ptdp {

enum class CommGroup : std::uint8_t { none, tp, dp, pp, model_parallel, embedding };
inline constexpr CommGroup kCommGroups[] = {CommGroup::none, CommGroup::tp, CommGroup::dp,
                                            CommGroup::pp, CommGroup::model_parallel, CommGroup::embedding};
// Defined in recording_communicator.cpp: the group's name ("none" for none), and
// the group of a name (nullopt for any other text).
const char* comm_group_name(CommGroup g);
std::optional<CommGroup> comm_group_from_name(std::string_view name);

}  // namespace ptdp
