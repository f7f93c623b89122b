// Per-rank truth: compute and communication-wait seconds from a timeline, the
// straggler summary, and the result's "ranks" and "hardware" blocks read back.
#include <gtest/gtest.h>

#include "core/results/rank_figures.h"
#include "core/results/result.h"
#include "core/results/timeline.h"
#include "core/sim/projector.h"

namespace ptdp {
namespace {

TEST(RankFigures, ComputeLeavesOutTheWaitsInsideIt) {
  Timeline t;
  t.push_back({0, Instr{Op::forward, 0, 0}, 0.0, 2.0});
  t.push_back({0, Instr{Op::forward, 0, 0}, 0.5, 1.0, CommGroup::tp, Collective::all_reduce});
  t.push_back({0, Instr{Op::send_forward, 0, 0}, 2.0, 2.25});
  t.push_back({0, Instr{Op::reduce_grads}, 2.25, 3.0});
  t.push_back({0, Instr{Op::reduce_grads}, 2.5, 3.0, CommGroup::dp, Collective::all_reduce});  // inside reduce_grads
  t.push_back({0, Instr{Op::optimizer_step}, 3.0, 4.0});
  t.push_back({1, Instr{Op::backward, 0, 0}, 0.0, 1.5});
  const auto split = time_split(t);
  EXPECT_DOUBLE_EQ(split.at(0).compute_s, 1.5);
  EXPECT_DOUBLE_EQ(split.at(0).comm_wait_s, 0.5 + 0.25 + 0.75);
  EXPECT_DOUBLE_EQ(split.at(1).compute_s, 1.5);
  EXPECT_DOUBLE_EQ(split.at(1).comm_wait_s, 0.0);
}

std::vector<RankFigures> ranks_computing(const std::vector<double>& compute, const std::vector<int>& nodes) {
  std::vector<RankFigures> out;
  for (std::size_t r = 0; r < compute.size(); ++r)
    out.push_back({"host-" + std::to_string(nodes[r]), 0, nodes[r], {0.5, 0.5}, compute[r], 0.1});
  return out;
}

TEST(RankFigures, TheSummaryNamesTheSlowestRankAndNodeAgainstTheMedian) {
  const auto s = straggler_summary(ranks_computing({1.0, 1.0, 3.0, 1.0}, {0, 0, 1, 1}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->rank, 2);
  EXPECT_DOUBLE_EQ(s->median_compute_s, 1.0);
  EXPECT_DOUBLE_EQ(s->rank_percent, 200.0);
  EXPECT_EQ(s->node, 1);
  EXPECT_EQ(s->node_host, "host-1");
  EXPECT_DOUBLE_EQ(s->node_percent, 100.0);
  EXPECT_EQ(describe(*s, 2).size(), 2u);
  EXPECT_EQ(describe(*s, 1).size(), 1u);  // one host: no node line
  EXPECT_FALSE(straggler_summary({}));
}

TEST(RankFigures, TheResultCarriesThemAndReadsThemBack) {
  Config c;
  c.model = {2, 64, 4, 16, 128, 256, 0.0};
  c.plan.global_batch = 2;
  c.plan.precision = Precision::fp32;
  c.machine = load_machine("cpu-host", default_machines_dir());
  RunResult r = projected_result(c, project(c, nullptr), nullptr);
  r.mode = ResultMode::measured;
  r.projected_error = "not projected here";
  r.ranks = ranks_computing({1.0, 2.0}, {0, 0});
  Hardware hw;
  hw.name = "test CPU";
  hw.profile = "cpu-host";
  hw.detected = true;
  r.hardware = hw;
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["ranks"].size(), 2u);
  EXPECT_EQ(j["stragglers"]["slowest_rank"]["rank"], 1);
  EXPECT_EQ(j["hardware"]["profile_chosen"], "detected");
  const RunResult back = read_result(j);
  ASSERT_EQ(back.ranks.size(), 2u);
  EXPECT_EQ(back.ranks[1].host, "host-0");
  ASSERT_TRUE(back.hardware);
  EXPECT_EQ(to_json(back), j);
  nlohmann::json old = j;  // a file from before these blocks
  for (const char* key : {"ranks", "stragglers", "hardware"}) old.erase(key);
  const RunResult older = read_result(old);
  EXPECT_TRUE(older.ranks.empty());
  EXPECT_FALSE(older.hardware);
  EXPECT_TRUE(older.extra.empty());
}

}  // namespace
}  // namespace ptdp
