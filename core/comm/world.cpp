// World creation: the only place that chooses between MPI and a single rank.
#include "core/comm/world.h"

#include <optional>

#include "core/comm/single_rank.h"
#include "core/comm/startup_watchdog.h"
#ifdef PTDP_HAVE_MPI
#include "core/comm/mpi_communicator.h"
#endif

namespace ptdp {

WorldSession::WorldSession(double timeout_s) {
#ifdef PTDP_HAVE_MPI
  // MPI_Init waits for every rank with no deadline of its own; the barrier
  // (the first collective) has one, and the watchdog covers both together.
  // A timeout <= 0 is the caller's to refuse, once started: nothing is watched.
  std::optional<StartupWatchdog> watchdog;
  if (timeout_s > 0) watchdog.emplace(timeout_s, "start-up (MPI_Init and a first barrier of all ranks)");
  PTDP_MPI_CHECK(MPI_Init(nullptr, nullptr));
  mpi_ = true;
  world_ = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, timeout_s);
  if (watchdog) world_->barrier();
#else
  (void)timeout_s;
  world_ = std::make_unique<SingleRankCommunicator>();
#endif
}

WorldSession::~WorldSession() {
  world_.reset();
#ifdef PTDP_HAVE_MPI
  if (mpi_) MPI_Finalize();
#endif
}

std::string WorldSession::library_version() const {
#ifdef PTDP_HAVE_MPI
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<std::size_t>(length));
  const auto comma = s.find(',');
  return comma == std::string::npos ? s : s.substr(0, comma);
#else
  return "none (single process)";
#endif
}

}  // namespace ptdp
