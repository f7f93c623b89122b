// The signal handler of InterruptWatch and the one variable it writes.
#include "endtoend/interrupt.h"

#include <csignal>
#include <cstdlib>

namespace ptdp::cli {

namespace {

// The CLI's one static: a signal handler can reach nothing else. Written by
// the handler only (storing a sig_atomic_t is async-signal-safe), read by the
// loop that owns the InterruptWatch.
volatile std::sig_atomic_t g_arrived = 0;

extern "C" void record_signal(int sig) { g_arrived = sig; }

}  // namespace

InterruptWatch::InterruptWatch() {
  g_arrived = 0;
  struct sigaction record {};
  record.sa_handler = record_signal;
  sigemptyset(&record.sa_mask);
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    sigaction(kSignals[i], nullptr, &previous_[i]);
    if (previous_[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &record, nullptr);  // nohup's SIGHUP stays ignored
  }
}

InterruptWatch::~InterruptWatch() {
  for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &previous_[i], nullptr);
}

int InterruptWatch::signal() const { return g_arrived; }

void InterruptWatch::end_by_signal() const {
  const int sig = g_arrived;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
  std::_Exit(128 + sig);  // not reached: the default action of these signals ends the process
}

}  // namespace ptdp::cli
