// A deadline for a job's start-up. A rank stopped or lost while the job starts
// leaves every other rank waiting in MPI_Init, where no communication deadline
// applies yet; the watchdog ends this rank instead, and the launcher (mpirun)
// then ends the job.
#pragma once
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace ptdp {

class StartupWatchdog {
 public:
  // Starts watching: unless disarmed within `timeout_s`, prints
  // "ptdp: rank R (host): <what> did not finish within N s ..." and ends the
  // process with status 3 (MPI_Abort's, see mpi_communicator.h). R is the
  // launcher's rank variable: MPI cannot be asked before MPI_Init.
  StartupWatchdog(double timeout_s, std::string what);
  ~StartupWatchdog();  // disarms
  StartupWatchdog(const StartupWatchdog&) = delete;
  StartupWatchdog& operator=(const StartupWatchdog&) = delete;

  void disarm();

 private:
  void watch(double timeout_s);

  std::string what_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  std::thread thread_;
};

}  // namespace ptdp
