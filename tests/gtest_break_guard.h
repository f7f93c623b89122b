// A GoogleTest listener for test programs whose tests share a process that one
// test can leave unusable for the rest (a sticky CUDA error poisons every later
// call in the process). After each test it asks `check` what is broken; on an
// answer it prints
//   [ BROKEN   ] Suite.Test: <answer>
// and ends the program at once with kBrokenExit, so that a driver running the
// tests in few processes (scripts/gtest_driver.py) records that test and
// resumes the rest in a fresh process instead of reporting a cascade.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>

namespace ptdp::test {

inline constexpr int kBrokenExit = 86;

class BreakGuard : public ::testing::EmptyTestEventListener {
 public:
  explicit BreakGuard(std::function<std::string()> check) : check_(std::move(check)) {}

  void OnTestEnd(const ::testing::TestInfo& info) override {
    const std::string broken = check_();
    if (broken.empty()) return;
    std::printf("[ BROKEN   ] %s.%s: %s\n", info.test_suite_name(), info.name(), broken.c_str());
    std::fflush(stdout);
    std::_Exit(kBrokenExit);
  }

 private:
  std::function<std::string()> check_;
};

// Initialises GoogleTest, installs a BreakGuard with `check` and runs every test.
inline int run_guarded_tests(int argc, char** argv, std::function<std::string()> check) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new BreakGuard(std::move(check)));
  return RUN_ALL_TESTS();
}

}  // namespace ptdp::test
