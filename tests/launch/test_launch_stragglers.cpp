// Per-rank truth under mpirun: a rank planted slow (--fault slow:1:4: its
// forwards and backwards take four times as long) is named by the straggler
// summary, printed and recorded; without the fault rank 1 is not named as
// twice the median; every rank's host and place are recorded and name the
// trace's tracks.
#include <gtest/gtest.h>

#include <set>

#include "core/topology/process_place.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;

// Two data-parallel ranks of the tiny model, 8 iterations; the result JSON.
nlohmann::json train_two_ranks(const ScratchDir& dir, const std::string& options, std::string* out = nullptr) {
  auto cfg = test::tiny_config_json();
  cfg["plan"]["dp"] = 2;
  const auto config = dir.write("c.json", cfg.dump());
  const auto r = test::run_command(std::string(PTDP_MPIRUN) + " -np 2 " + test::ptdp_cli() + " train --config " +
                                       config.string() + " --iterations 8 --out r.json --trace t.json " + options,
                                   dir);
  EXPECT_EQ(r.status, 0) << r.err;
  if (out != nullptr) *out = r.out;
  return r.status == 0 ? nlohmann::json::parse(test::read_file(dir.path() / "r.json")) : nlohmann::json{};
}

TEST(LaunchStragglers, APlantedSlowRankIsNamed) {
  ScratchDir dir("straggler");
  std::string out;
  const auto j = train_two_ranks(dir, "--fault slow:1:4", &out);
  ASSERT_FALSE(j.is_null());
  const auto& slowest = j["stragglers"]["slowest_rank"];
  EXPECT_EQ(slowest["rank"], 1) << j["stragglers"].dump();
  // Four times the compute of rank 0: 60% above the median of two ranks.
  EXPECT_GT(slowest["percent_above_median"].get<double>(), 25) << j["stragglers"].dump();
  EXPECT_NE(out.find("ptdp train: slowest rank 1:"), std::string::npos) << out;
  ASSERT_EQ(j["ranks"].size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const auto& rank = j["ranks"][r];
    EXPECT_EQ(rank["host"], this_process().host);
    EXPECT_EQ(rank["local_rank"], r);
    EXPECT_EQ(rank["node"], 0);
    EXPECT_EQ(rank["iteration_s"].size(), 7u);
    EXPECT_GT(rank["comm_wait_s"].get<double>(), 0);  // the gradient all-reduce at least
  }
  // The fast rank waits for the slow one in their collectives.
  EXPECT_GT(j["ranks"][0]["comm_wait_s"].get<double>(), j["ranks"][1]["comm_wait_s"].get<double>());
  EXPECT_EQ(j["hardware"]["ranks_per_host"], 2);
  std::set<std::string> tracks;
  const auto trace = nlohmann::json::parse(test::read_file(dir.path() / "t.json"));
  for (const auto& e : trace["traceEvents"])
    if (e["name"] == "thread_name") tracks.insert(e["args"]["name"].get<std::string>());
  const std::string host = this_process().host;
  EXPECT_EQ(tracks, (std::set<std::string>{"rank 0 (t0 d0 p0) @ " + host, "rank 1 (t0 d1 p0) @ " + host}));
}

TEST(LaunchStragglers, WithoutAFaultRankOneIsNotNamedAsTwiceTheMedian) {
  ScratchDir dir("no-straggler");
  const auto j = train_two_ranks(dir, "");
  ASSERT_FALSE(j.is_null());
  const auto& slowest = j["stragglers"]["slowest_rank"];
  EXPECT_FALSE(slowest["rank"] == 1 && slowest["percent_above_median"].get<double>() > 100) << j["stragglers"].dump();
}

}  // namespace
}  // namespace ptdp
