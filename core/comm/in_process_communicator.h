// Communicators of ranks that are threads of one process, over host memory:
// collectives meet at a shared rendezvous, a send copies the message into the
// receiver's mailbox (so it never blocks), a receive waits for it with a
// deadline. Groups are checked as NCCL needs them (paired, no collective
// inside). Lets a test run several ranks' instruction lists in one process.
#pragma once
#include <atomic>
#include <memory>
#include <vector>

#include "core/comm/communicator.h"

namespace ptdp {

// What a test may want to know of how the ranks used the communicators.
struct InProcessLog {
  std::atomic<long> groups{0};  // group_end calls that closed a group, all ranks and groups
};

// The world of `size` ranks: element r is rank r's communicator, to be used
// from one thread each. Every wait gives up after `timeout_s` with an exception
// naming the rank (a peer thread that failed must not hang the others).
// `log` (optional, outliving the communicators) counts what they did.
std::vector<std::unique_ptr<Communicator>> make_in_process_world(int size, double timeout_s,
                                                                 InProcessLog* log = nullptr);

}  // namespace ptdp
