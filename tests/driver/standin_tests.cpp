// A stand-in for the GPU test program, for checking scripts/gtest_driver.py on
// a machine without a GPU (tests/driver/check_gtest_driver.py): GoogleTest
// tests that pass, fail, skip, crash, hang and leave the process broken (the
// role of a sticky CUDA error, reported by the same BreakGuard as the GPU
// tests'), between tests that pass, so the driver's resumption shows.
#include <csignal>
#include <string>
#include <thread>

#include "tests/gtest_break_guard.h"

namespace {

bool broken = false;  // set by the test that "leaves a sticky error"

TEST(Standin, PassesFirst) { SUCCEED(); }
TEST(Standin, Fails) { EXPECT_EQ(1 + 1, 3) << "a planted failure"; }
TEST(Standin, Skips) { GTEST_SKIP() << "a planted skip"; }
TEST(Standin, Crashes) { std::raise(SIGSEGV); }
TEST(Standin, PassesAfterTheCrash) { SUCCEED(); }
TEST(Standin, Hangs) {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}
TEST(Standin, PassesAfterTheHang) { SUCCEED(); }
TEST(Standin, LeavesAStickyError) { broken = true; }
TEST(Standin, PassesAfterTheStickyError) { SUCCEED(); }
TEST(StandinTyped, PassesLast) { SUCCEED(); }

}  // namespace

int main(int argc, char** argv) {
  return ptdp::test::run_guarded_tests(argc, argv, [] { return broken ? std::string("planted sticky error") : ""; });
}
