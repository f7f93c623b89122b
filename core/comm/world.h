// The process world of a run: MPI when ptdp is built with it (launched by
// mpirun or srun, or a single process), else one rank. Owns MPI's lifetime.
#pragma once
#include <memory>
#include <string>

#include "core/comm/communicator.h"

namespace ptdp {

class WorldSession {
 public:
  // `timeout_s`: deadline of every communication wait (a silent peer aborts the
  // job), and of start-up: MPI_Init and a first barrier (startup_watchdog.h).
  explicit WorldSession(double timeout_s);
  ~WorldSession();
  WorldSession(const WorldSession&) = delete;
  WorldSession& operator=(const WorldSession&) = delete;

  Communicator& world() { return *world_; }
  // The MPI library's version string, or "none (single process)".
  std::string library_version() const;

 private:
  std::unique_ptr<Communicator> world_;
  bool mpi_ = false;
};

}  // namespace ptdp
