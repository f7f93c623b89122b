// This process's place from the launcher's environment and the host name.
#include "core/topology/process_place.h"

#include <unistd.h>

#include <cstdlib>
#include <initializer_list>

namespace ptdp {

namespace {

// The first of the launchers' variables that is set, as an integer; 0 when none is.
int launcher_value(std::initializer_list<const char*> vars) {
  for (const char* var : vars)
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return 0;
}

}  // namespace

ProcessPlace this_process() {
  ProcessPlace place;
  place.rank = launcher_value({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "PMI_RANK"});
  place.local_rank =
      launcher_value({"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"});
  char name[256] = "";
  place.host = gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
  return place;
}

std::string where(const ProcessPlace& place) {
  return "rank " + std::to_string(place.rank) + " (" + place.host + ")";
}

}  // namespace ptdp
