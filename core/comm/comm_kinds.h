// The names of recorded communication: which process group and which
// collective. Vocabulary shared by the recording communicator and the timeline
// (core/metrics/timeline.h), so the timeline needs no communicator.
#pragma once
#include <cstdint>

namespace ptdp {

enum class CommGroup : std::uint8_t { none, tp, dp, pp, model_parallel, embedding };
enum class CommOp : std::uint8_t { none, all_reduce, all_gather, reduce_scatter, broadcast };
const char* comm_group_name(CommGroup g);  // defined in recording_communicator.cpp
const char* comm_op_name(CommOp op);

}  // namespace ptdp
