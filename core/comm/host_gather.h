// Gathering host-side figures (per-rank peaks, bubbles, timelines) to every rank
// of a host communicator (MPI or single rank), for rank 0 to report.
#pragma once
#include <vector>

#include "core/comm/communicator.h"

namespace ptdp {

// Every rank's vector, in rank order; lengths may differ between ranks.
std::vector<std::vector<double>> gather_host(Communicator& host, const std::vector<double>& mine);

// One value per rank, in rank order.
std::vector<double> gather_host(Communicator& host, double mine);

}  // namespace ptdp
