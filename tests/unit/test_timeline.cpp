// Timeline events with nested collective waits: packing for the gather over
// ranks and the Chrome trace keep which collective each wait was.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/config/json_read.h"
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
  EXPECT_EQ(list[2].at("name"), "dp broadcast");
  const Timeline back = timeline_from_chrome_trace(trace);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_TRUE(back[0].is_instruction());
  EXPECT_EQ(back[1].comm, Collective::all_reduce);
  EXPECT_EQ(back[2].comm, Collective::broadcast);
  EXPECT_EQ(back[2].instr.op, Op::backward);
  EXPECT_EQ(back[2].group, CommGroup::dp);
}

// The trace's args name the event's enums; reading takes them back by name.
TEST(Timeline, ChromeTraceWritesEnumsByName) {
  const nlohmann::json trace = chrome_trace(events_with_waits(), "test");
  const auto& list = trace.at("traceEvents");
  const nlohmann::json first = {{"op", "F"}, {"mb", 1}, {"chunk", 0}, {"group", "none"}, {"comm", nullptr}};
  EXPECT_EQ(list[0].at("args"), first);
  EXPECT_EQ(list[1].at("args").at("group"), "tp");
  EXPECT_EQ(list[1].at("args").at("comm"), "all_reduce");
  EXPECT_EQ(list[2].at("args").at("op"), "B");
}

// A name ptdp does not know (or an old trace's integer) is refused, naming the field.
TEST(Timeline, ReadingRefusesAnUnknownNameNamingTheField) {
  const std::vector<std::pair<std::string, nlohmann::json>> broken = {
      {"op", "backward"}, {"op", 4}, {"group", "world"}, {"comm", "all_to_all"}, {"comm", 1}};
  for (const auto& [field, value] : broken) {
    nlohmann::json trace = chrome_trace(events_with_waits(), "test");
    trace["traceEvents"][1]["args"][field] = value;
    try {
      timeline_from_chrome_trace(trace, "t.json");
      ADD_FAILURE() << field << " = " << value << " was read";
    } catch (const JsonRefused& e) {
      EXPECT_EQ(e.source(), "t.json");
      EXPECT_EQ(e.pointer(), "/traceEvents/1/args/" + field) << e.what();
    }
  }
}

}  // namespace
}  // namespace ptdp
