// The start-up watchdog: a thread that waits for disarm() or the deadline.
#include "core/comm/startup_watchdog.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace ptdp {

namespace {

// "rank 1 (host)" from the launcher's variables (Open MPI, PMIx, Slurm, MPICH).
std::string launcher_rank() {
  std::string rank = "?";
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "PMI_RANK"})
    if (const char* v = std::getenv(var)) {
      rank = v;
      break;
    }
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  return "rank " + rank + " (" + host + ")";
}

}  // namespace

StartupWatchdog::StartupWatchdog(double timeout_s, std::string what)
    : what_(std::move(what)), thread_([this, timeout_s] { watch(timeout_s); }) {}

StartupWatchdog::~StartupWatchdog() { disarm(); }

void StartupWatchdog::disarm() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    disarmed_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StartupWatchdog::watch(double timeout_s) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (cv_.wait_for(lock, std::chrono::duration<double>(timeout_s), [this] { return disarmed_; })) return;
  std::fprintf(stderr, "ptdp: %s: %s did not finish within %g s (a rank stopped or died while the job started); "
               "ending this rank\n", launcher_rank().c_str(), what_.c_str(), timeout_s);
  std::fflush(stderr);
  std::_Exit(3);
}

}  // namespace ptdp
