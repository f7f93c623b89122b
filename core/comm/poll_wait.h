// Waiting on a non-blocking operation by polling, with a deadline. Shared by the
// MPI and NCCL communicators: spin for the first 64 polls (fast completions pay no
// latency), then yield, then sleep 50 µs between polls, so a rank waiting on a slow
// peer does not hold a core. The deadline is read every 256 polls (clock reads cost).
#pragma once
#include <sched.h>

#include <chrono>
#include <thread>

namespace ptdp {

// Calls done(polls_so_far) until it returns true (→ true) or timeout_s has passed
// (→ false). done may throw or abort to end the wait on an error.
template <class Done>
bool poll_until(double timeout_s, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (long polls = 0;; ++polls) {
    if (done(polls)) return true;
    if (polls < 64) continue;
    if (polls < 4096) sched_yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
    if ((polls & 255) == 0 && std::chrono::steady_clock::now() > deadline) return false;
  }
}

}  // namespace ptdp
