// The deadline logic of core/io/poll_wait.h: a wait that never completes
// returns after its timeout, and settle() (the state machine that polls a
// non-blocking NCCL communicator's creation) ends ready, failed or timed out,
// calling its abort exactly once when not ready.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <vector>

#include "core/io/poll_wait.h"

namespace ptdp {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(PollUntil, NeverDoneReturnsFalseAfterTheTimeout) {
  const auto t0 = std::chrono::steady_clock::now();
  long polls = 0;
  EXPECT_FALSE(poll_until(0.05, [&](long) {
    ++polls;
    return false;
  }));
  EXPECT_GE(seconds_since(t0), 0.05);
  EXPECT_LT(seconds_since(t0), 5.0) << "the deadline is checked often enough";
  EXPECT_GT(polls, 64);
}

TEST(PollUntil, DoneAtOnceReturnsTrueWithoutWaiting) {
  int polls = 0;
  EXPECT_TRUE(poll_until(1000.0, [&](long) { return ++polls == 3; }));
  EXPECT_EQ(polls, 3);
}

// Answers a scripted sequence, repeating the last answer forever.
struct Script {
  std::vector<Progress> answers;
  std::size_t next = 0;
  Progress operator()() { return answers[std::min(next++, answers.size() - 1)]; }
};

TEST(Settle, InProgressTwiceThenSuccessIsReady) {
  Script s{{Progress::in_progress, Progress::in_progress, Progress::ready}};
  int aborts = 0;
  EXPECT_EQ(settle(1000.0, std::ref(s), [&](Settled) { ++aborts; }), Settled::ready);
  EXPECT_EQ(s.next, 3u);
  EXPECT_EQ(aborts, 0);
}

TEST(Settle, InProgressForeverTimesOutAndAbortsOnce) {
  Script s{{Progress::in_progress}};
  std::vector<Settled> aborts;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(settle(0.05, std::ref(s), [&](Settled why) { aborts.push_back(why); }), Settled::timed_out);
  EXPECT_GE(seconds_since(t0), 0.05);
  ASSERT_EQ(aborts.size(), 1u);
  EXPECT_EQ(aborts[0], Settled::timed_out);
}

TEST(Settle, AsyncErrorFailsAndAbortsOnce) {
  Script s{{Progress::in_progress, Progress::failed}};
  std::vector<Settled> aborts;
  EXPECT_EQ(settle(1000.0, std::ref(s), [&](Settled why) { aborts.push_back(why); }), Settled::failed);
  ASSERT_EQ(aborts.size(), 1u);
  EXPECT_EQ(aborts[0], Settled::failed);
}

TEST(Settle, AnAbortThatThrowsEndsTheWait) {
  Script s{{Progress::in_progress}};
  EXPECT_THROW(settle(0.01, std::ref(s), [](Settled) { throw std::runtime_error("aborted"); }),
               std::runtime_error);
}

}  // namespace
}  // namespace ptdp
