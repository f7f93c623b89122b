// The start-up watchdog (core/comm/startup_watchdog.h): it ends the process
// with MPI_Abort's status when start-up outlasts the timeout, naming what did
// not finish, and does nothing once disarmed. Under mpirun:
// tests/launch/test_launch.cpp (a rank stopped during start-up).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/comm/startup_watchdog.h"

namespace ptdp {
namespace {

TEST(StartupWatchdogDeathTest, EndsTheProcessWhenStartUpOutlastsTheTimeout) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        StartupWatchdog watchdog(0.2, "start-up of the test");
        std::this_thread::sleep_for(std::chrono::seconds(10));
        std::_Exit(0);
      },
      testing::ExitedWithCode(3), "start-up of the test did not finish within 0.2 s");
}

TEST(StartupWatchdog, DisarmedInTimeItLetsTheProcessGoOn) {
  const auto t0 = std::chrono::steady_clock::now();
  {
    StartupWatchdog watchdog(0.2, "start-up");
    watchdog.disarm();
  }  // the destructor disarms again, harmlessly
  StartupWatchdog other(0.2, "start-up");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  other.disarm();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);  // and it is still here
}

}  // namespace
}  // namespace ptdp
