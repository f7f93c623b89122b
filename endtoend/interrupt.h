// Termination requests (SIGTERM, SIGINT, SIGHUP) turned into a value a loop
// polls, so that `ptdp sweep` ends its running points before it ends itself.
#pragma once
#include <signal.h>

#include <array>

namespace ptdp::cli {

// While one exists, those signals (each one not ignored already) only record
// themselves; it restores the previous handlers when destroyed. One at a time:
// what the handler records is process-wide, as signal dispositions are.
class InterruptWatch {
 public:
  InterruptWatch();
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  // The signal that arrived, or 0.
  int signal() const;
  // Restores the default action and raises the signal again, so that this
  // process ends as the signal would have ended it (its parent sees that).
  [[noreturn]] void end_by_signal() const;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGTERM, SIGINT, SIGHUP};
  std::array<struct sigaction, kSignals.size()> previous_{};
};

}  // namespace ptdp::cli
