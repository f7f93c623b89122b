// Names of communication groups and operations, for traces.
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

const char* comm_op_name(CommOp op) {
  switch (op) {
    case CommOp::all_reduce: return "all_reduce";
    case CommOp::all_gather: return "all_gather";
    case CommOp::reduce_scatter: return "reduce_scatter";
    case CommOp::broadcast: return "broadcast";
    case CommOp::none: break;
  }
  return "";
}

}  // namespace ptdp
