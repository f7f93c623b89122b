// Timeline events with nested collective waits: packing for the gather over
// ranks and the Chrome trace keep which collective each wait was.
#include <gtest/gtest.h>

#include "core/results/timeline.h"

namespace ptdp {
namespace {

Timeline events_with_waits() {
  Timeline t;
  t.push_back({0, Instr{Op::forward, 1, 0}, 0.0, 2.0});
  t.push_back({0, Instr{Op::forward, 1, 0}, 0.5, 0.75, CommGroup::tp, Collective::all_reduce});
  t.push_back({1, Instr{Op::backward, 0, 1}, 1.0, 3.0, CommGroup::dp, Collective::broadcast});
  return t;
}

TEST(Timeline, PackingKeepsTheCollectiveOfEachWait) {
  const Timeline t = events_with_waits();
  const std::vector<double> packed = pack_timeline(t);
  ASSERT_EQ(packed.size(), 24u);
  // The comm code crosses ranks as a double: 0 an instruction, 1 + the collective otherwise.
  EXPECT_EQ(packed[7], 0.0);
  EXPECT_EQ(packed[15], 1.0);
  EXPECT_EQ(packed[23], 4.0);
  const Timeline back = unpack_timeline(packed);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_TRUE(back[0].is_instruction());
  EXPECT_EQ(back[1].comm, Collective::all_reduce);
  EXPECT_EQ(back[1].group, CommGroup::tp);
  EXPECT_EQ(back[2].comm, Collective::broadcast);
  EXPECT_EQ(back[2].instr.chunk, 1);
}

TEST(Timeline, ChromeTraceNamesWaitsByGroupAndCollective) {
  const nlohmann::json trace = chrome_trace(events_with_waits(), "test");
  const auto& list = trace.at("traceEvents");
  EXPECT_EQ(list[1].at("name"), "tp all_reduce");
  EXPECT_EQ(list[1].at("cat"), "communication");
  EXPECT_EQ(list[1].at("args").at("comm"), 1);
  EXPECT_EQ(list[2].at("name"), "dp broadcast");
  EXPECT_EQ(list[0].at("args").at("comm"), 0);
  const Timeline back = timeline_from_chrome_trace(trace);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_TRUE(back[0].is_instruction());
  EXPECT_EQ(back[1].comm, Collective::all_reduce);
  EXPECT_EQ(back[2].comm, Collective::broadcast);
}

}  // namespace
}  // namespace ptdp
