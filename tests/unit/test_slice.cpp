// `ptdp slice` end to end on the CPU with tiny configs: a slice result with
// measured per-chunk costs, a projected iteration and per-rank memory; a
// machine too small gives does_not_fit; bad input is refused before anything
// runs. And the stand-in group itself: shapes kept, sends dropped, receives zeroed.
#include <gtest/gtest.h>

#include <vector>

#include "core/comm/shape_only_communicator.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;

// t = 2, p = 2, interleaved with v = 2 (4 layers: one per virtual stage).
nlohmann::json sliced_config() {
  auto c = test::tiny_config_json();
  c["model"]["layers"] = 4;
  c["plan"]["tp"] = 2;
  c["plan"]["pp"] = 2;
  c["plan"]["virtual_stages"] = 2;
  c["plan"]["schedule"] = "interleaved";
  return c;
}

test::Run slice(const ScratchDir& dir, const nlohmann::json& cfg, const std::string& extra, int iterations = 2) {
  const auto config = dir.write("c.json", cfg.dump());
  return test::run_command(test::ptdp_cli() + " slice --config " + config.string() + " --iterations " +
                               std::to_string(iterations) + " --warmup 1 " + extra,
                           dir);
}

TEST(Slice, WritesASliceResultWithMeasuredCostsAndAProjection) {
  ScratchDir dir("slice");
  const auto r = slice(dir, sliced_config(), "--stage 1 --out r.json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  EXPECT_EQ(j["mode"], "slice");
  const auto& s = j["slice"];
  EXPECT_EQ(s["stage"], 1);
  ASSERT_EQ(s["forward_s_per_chunk"].size(), 2u);
  for (const auto* key : {"forward_s_per_chunk", "backward_s_per_chunk"})
    for (const auto& x : s[key]) EXPECT_GT(x.get<double>(), 0) << key;
  EXPECT_GT(s["optimizer_s"].get<double>(), 0);
  EXPECT_GT(s["peak_measured_bytes"].get<std::int64_t>(), 0);
  ASSERT_EQ(s["rank_fits"].size(), 2u);
  for (const auto& f : s["rank_fits"]) EXPECT_TRUE(f.get<bool>());
  const auto& m = j["metrics"];
  EXPECT_GT(m["iteration_s"]["median"].get<double>(), 0);
  EXPECT_GT(m["model_tflops_per_gpu"].get<double>(), 0);
  EXPECT_TRUE(m["memory_bytes"]["fits"].get<bool>());
  EXPECT_FALSE(j.contains("does_not_fit"));
}

TEST(Slice, ATinyMachineDoesNotFit) {
  ScratchDir dir("slice-oom");
  auto cfg = sliced_config();
  auto machine = nlohmann::json::parse(test::read_file(std::string(PTDP_SOURCE_DIR) + "/sweeps/machines/cpu-host.json"));
  machine["memory_bytes"] = 100000;  // 100 kB: less than the stage's parameters and optimizer state
  cfg["machine"] = machine;
  const auto r = slice(dir, cfg, "--stage heaviest --out r.json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  EXPECT_FALSE(j["metrics"]["memory_bytes"]["fits"].get<bool>());
  ASSERT_TRUE(j.contains("does_not_fit"));
  EXPECT_EQ(j["does_not_fit"]["pipeline_ranks"].size(), 2u);
  EXPECT_GT(j["does_not_fit"]["peak_bytes"].get<std::int64_t>(), 100000);
}

// The stage's share does not fit on the device itself: recorded, not a failure.
TEST(Slice, AStageThatRunsOutOfMemoryIsRecordedAsNotFitting) {
  ScratchDir dir("slice-devoom");
  const auto r = slice(dir, sliced_config(), "--stage 0 --cpu-memory-limit 100000 --out r.json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  EXPECT_EQ(j["mode"], "slice");
  EXPECT_FALSE(j["metrics"]["memory_bytes"]["fits"].get<bool>());
  EXPECT_NE(j["slice"]["out_of_memory"].get<std::string>().find("100000"), std::string::npos)
      << j["slice"]["out_of_memory"];
  EXPECT_EQ(j["does_not_fit"]["pipeline_ranks"], nlohmann::json::array({0}));
  EXPECT_GT(j["metrics"]["iteration_s"]["median"].get<double>(), 0);  // the model's projection
}

TEST(Slice, RefusesABadStageBeforeRunning) {
  ScratchDir dir("slice-bad");
  for (const std::string stage : {"2", "-1", "x", "1x"}) {
    const auto r = slice(dir, sliced_config(), "--stage=" + stage + " --out r.json");
    EXPECT_EQ(r.status, 2) << stage;
    EXPECT_NE(r.err.find("--stage"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json")) << stage;
  }
  const auto r = slice(dir, sliced_config(), "--warmup 2 --out r.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--warmup"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

// With p = 1 (t = d = 1: nothing to communicate) the projection replays the
// measured stage's own costs: the m = 4 micro-batches' forwards and backwards
// and the optimizer step, back to back; and, the costs being means, it is
// roughly the mean measured iteration (a loose sanity ratio, not a timing test).
TEST(Slice, OneStageProjectsItsOwnMeasuredCosts) {
  ScratchDir dir("slice-p1");
  const auto r = slice(dir, test::tiny_config_json(), "--out r.json", 5);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  const auto& s = j["slice"];
  const double m = 4;  // global batch 8 / micro-batch 2
  const double replayed = m * (s["forward_s_per_chunk"][0].get<double>() + s["backward_s_per_chunk"][0].get<double>()) +
                          s["optimizer_s"].get<double>();
  const double projected = j["metrics"]["iteration_s"]["median"].get<double>();
  EXPECT_NEAR(projected, replayed, 0.01 * replayed);
  const double measured = s["measured_iteration_s"].get<double>();
  ASSERT_GT(measured, 0);
  EXPECT_GT(projected / measured, 0.5);
  EXPECT_LT(projected / measured, 2.0);
}

TEST(ShapeOnlyCommunicator, KeepsThisRanksDataDropsSendsZerosReceives) {
  ShapeOnlyCommunicator c(1, 2);
  std::vector<float> buf = {1, 2, 3};
  c.all_reduce(buf.data(), 3, DType::f32, ReduceOp::sum);
  EXPECT_EQ(buf, (std::vector<float>{1, 2, 3}));
  std::vector<float> gathered = {9, 9, 9, 9};
  c.all_gather(buf.data(), gathered.data(), 2, DType::f32);
  EXPECT_EQ(gathered, (std::vector<float>{9, 9, 1, 2}));  // rank 1's block
  std::vector<float> piece(2, 0);
  c.reduce_scatter(gathered.data(), piece.data(), 2, DType::f32, ReduceOp::sum);
  EXPECT_EQ(piece, (std::vector<float>{1, 2}));
  c.isend(buf.data(), 3, DType::f32, 0, 0)->wait();
  c.irecv(buf.data(), 3, DType::f32, 0, 0)->wait();
  EXPECT_EQ(buf, (std::vector<float>{0, 0, 0}));
  EXPECT_THROW(c.isend(buf.data(), 3, DType::f32, 1, 0), std::logic_error);  // itself
  EXPECT_THROW(c.irecv(buf.data(), 3, DType::f32, 2, 0), std::logic_error);  // outside the group
  EXPECT_EQ(c.split(0, 0)->size(), 1);
}

// On a device without a clear given, buffers are never touched from the host
// (here host memory labelled as device memory: a host write would show).
TEST(ShapeOnlyCommunicator, LeavesDeviceBuffersAlone) {
  ShapeOnlyCommunicator c(0, 2, Device::cuda);
  std::vector<float> buf = {1, 2}, gathered = {7, 7, 7, 7};
  c.all_gather(buf.data(), gathered.data(), 2, DType::f32);
  EXPECT_EQ(gathered, (std::vector<float>{7, 7, 7, 7}));
  c.irecv(buf.data(), 2, DType::f32, 1, 0)->wait();
  EXPECT_EQ(buf, (std::vector<float>{1, 2}));
  int cleared = 0;
  ShapeOnlyCommunicator with_clear(0, 2, Device::cuda, [&](void*, std::size_t bytes) { cleared += static_cast<int>(bytes); });
  with_clear.irecv(buf.data(), 2, DType::f32, 1, 0)->wait();
  EXPECT_EQ(cleared, 8);
}

}  // namespace
}  // namespace ptdp
