// The start-up watchdog: a thread that waits for disarm() or the deadline.
#include "core/comm/startup_watchdog.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "core/topology/process_place.h"

namespace ptdp {

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
               "ending this rank\n", where(this_process()).c_str(), what_.c_str(), timeout_s);
  std::fflush(stderr);
  std::_Exit(3);
}

}  // namespace ptdp
