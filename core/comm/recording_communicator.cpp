// Names of communication groups, for traces.
#include "core/comm/recording_communicator.h"

namespace ptdp {

const char* comm_group_name(CommGroup g) {
  switch (g) {
    case CommGroup::tp: return "tp";
    case CommGroup::dp: return "dp";
    case CommGroup::pp: return "pp";
    case CommGroup::model_parallel: return "mp";
    case CommGroup::embedding: return "embedding";
    case CommGroup::none: break;
  }
  return "none";
}

std::optional<CommGroup> comm_group_from_name(std::string_view name) {
  for (const CommGroup g : kCommGroups)
    if (name == comm_group_name(g)) return g;
  return std::nullopt;
}

}  // namespace ptdp
