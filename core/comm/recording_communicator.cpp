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
  return "";
}

}  // namespace ptdp
