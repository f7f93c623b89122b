// Where each rank of a run sits: its host, its rank among that host's ranks
// and the host's index, from the host names gathered over the world (this
// process's own place: core/topology/process_place.h).
#pragma once
#include <string>
#include <vector>

#include "core/comm/communicator.h"

namespace ptdp {

struct RankPlace {
  std::string host;    // the rank's ProcessPlace::host
  int local_rank = 0;  // its rank among the ranks of that host (world order)
  int node = 0;        // the host's index, in the order hosts first appear in world order
};

// The placement of ranks whose hosts are `hosts` (index = world rank).
std::vector<RankPlace> placement_of(const std::vector<std::string>& hosts);

// The most ranks any one host runs (1 for an empty placement).
int ranks_per_host(const std::vector<RankPlace>& places);

// Every rank's place, gathered to every rank of `world` (collective); `host`
// is this rank's (ProcessPlace::host).
std::vector<RankPlace> gather_placement(Communicator& world, const std::string& host);

}  // namespace ptdp
