// Where this process runs: its world rank, its rank among its host's ranks and
// its host. Read once where a command starts and passed to what chooses or
// reports by it; the world's places, gathered over the ranks, are
// core/comm/placement.h.
#pragma once
#include <string>

namespace ptdp {

struct ProcessPlace {
  int rank = 0;        // world rank
  int local_rank = 0;  // rank among this host's ranks: which of the host's GPUs it takes
  std::string host;    // gethostname(), "unknown" when it has none
};

// This process's place: the ranks from the launcher's variables (Open MPI,
// PMIx, Slurm, MPICH's PMI; 0 for a process started alone), the host from
// gethostname. Failure reports with no caller to hand it over (the CUDA, NCCL
// and MPI checks, the start-up watchdog) call it when they report.
ProcessPlace this_process();

// "rank R (host)": how every message that says where something failed names the process.
std::string where(const ProcessPlace& place);

}  // namespace ptdp
