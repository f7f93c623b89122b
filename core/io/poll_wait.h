// Waiting on a non-blocking operation by polling, with a deadline. Shared by the
// MPI and NCCL communicators and the CUDA stream waits: spin for the first 64 polls (fast completions pay no
// latency), then yield, then sleep 50 µs between polls, so a rank waiting on a slow
// peer does not hold a core. The deadline is read every 256 polls (clock reads cost).
#pragma once
#include <sched.h>

#include <chrono>
#include <cstdint>
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

namespace ptdp {

// The state of an asynchronous set-up (a non-blocking NCCL communicator being
// created, split or finalized): still going, done, or failed.
enum class Progress : std::uint8_t { in_progress, ready, failed };

// How settle() ended.
enum class Settled : std::uint8_t { ready, failed, timed_out };

// Polls progress() (→ Progress) until it is no longer in_progress. On failure
// or after timeout_s, calls abort(Settled) exactly once (it may throw or end
// the job) and returns how it ended.
template <class ProgressFn, class Abort>
Settled settle(double timeout_s, ProgressFn progress, Abort abort) {
  Progress last = Progress::in_progress;
  const bool finished = poll_until(timeout_s, [&](long) {
    last = progress();
    return last != Progress::in_progress;
  });
  const Settled outcome = !finished ? Settled::timed_out : last == Progress::ready ? Settled::ready : Settled::failed;
  if (outcome != Settled::ready) abort(outcome);
  return outcome;
}

}  // namespace ptdp
