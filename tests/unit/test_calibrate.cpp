// Bus-bandwidth factors (nccl-tests' definitions) and `calibrate`: benchmark
// JSON to a calibration table that moves a projection the way it should.
#include <gtest/gtest.h>

#include "core/metrics/bus_bandwidth.h"
#include "core/sim/calibrate.h"
#include "core/sim/projector.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;

TEST(BusBandwidth, FactorsOfNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_gather, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::reduce_scatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::broadcast, 16), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::send_recv, 2), 1.0);
  EXPECT_DOUBLE_EQ(algbw(1e9, 0.5), 2e9);
  EXPECT_DOUBLE_EQ(busbw(Collective::all_reduce, 4, 1e9, 0.5), 2e9 * 1.5);
}

Config gpt_on_a100() {
  Config c;
  c.model = {8, 4096, 32, 2048, 51200, 0, 0};
  c.plan.global_batch = 8;
  c.plan.recompute = Recompute::full;
  c.machine = load_machine("a100-80gb", default_machines_dir());
  return c;
}

// A Google Benchmark file with the GEMMs of the layer measured `slowdown` times the model's time.
json gemm_benchmarks(const Config& c, double slowdown) {
  const DeviceRates dev(c.machine, c.plan.precision, nullptr);
  json runs = json::array();
  const double n = 2048, h = 4096;
  for (const auto& g : {GemmShape{n, 3 * h, h}, GemmShape{n, h, h}, GemmShape{n, 4 * h, h}, GemmShape{n, h, 4 * h}})
    runs.push_back({{"name", "gemm/x"}, {"run_type", "iteration"}, {"label", "gemm"}, {"time_unit", "ms"},
                    {"real_time", 1e3 * slowdown * dev.analytical_gemm_seconds(g)}, {"m", g.m}, {"n", g.n}, {"k", g.k},
                    {"batch", 1}});
  runs.push_back({{"name", "layernorm/fwd"}, {"run_type", "iteration"}, {"label", "memory"}, {"time_unit", "ms"},
                  {"real_time", 1.0}, {"bytes", 1e9}});  // 1 GB in 1 ms: 1000 GB/s
  return {{"context", {{"ptdp_hardware", "test"}, {"ptdp_precision", "bf16"}}}, {"benchmarks", runs}};
}

TEST(Calibrate, ASlowerGemmTableGivesASlowerProjection) {
  test::ScratchDir dir("calibrate");
  const Config c = gpt_on_a100();
  const auto fast = dir.write("fast.json", gemm_benchmarks(c, 1.0).dump());
  const auto slow = dir.write("slow.json", gemm_benchmarks(c, 2.0).dump());
  const Calibration same = calibrate({fast}, "a100-80gb"), slower = calibrate({slow}, "a100-80gb");
  ASSERT_EQ(slower.gemms.size(), 4u);
  EXPECT_DOUBLE_EQ(slower.memory_bandwidth_gbs, 1000.0);
  const Calibration again = Calibration::from_json(slower.to_json(), "round trip");
  EXPECT_EQ(again.gemms.size(), 4u);
  const double base = project(c, &same).iteration_s, slowed = project(c, &again).iteration_s;
  EXPECT_GT(slowed, 1.4 * base);
  EXPECT_THROW(calibrate({dir.write("bad.json", "{\"x\": 1}")}, "a100-80gb"), std::runtime_error);
}

TEST(Calibrate, CollectivesFitAlphaAndBusBandwidthPerLinkClass) {
  test::ScratchDir dir("calibrate-coll");
  json runs = json::array();
  // all-reduce on 2 ranks of one node: 10 µs + bytes / 50 GB/s of bus bandwidth (factor 1).
  for (double bytes : {8.0, 1024.0, 1048576.0, 16777216.0})
    runs.push_back({{"name", "collective/all_reduce"}, {"run_type", "iteration"}, {"label", "all_reduce"},
                    {"time_unit", "us"}, {"real_time", 10 + 1e6 * bytes / 50e9}, {"bytes", bytes}, {"bus_factor", 1.0},
                    {"ranks", 2}, {"ranks_per_node", 2}});
  const auto file = dir.write("coll.json", json({{"context", json::object()}, {"benchmarks", runs}}).dump());
  const Calibration c = calibrate({file}, "a100-80gb");
  const CollectiveRate* r = c.collective(Collective::all_reduce, true);
  ASSERT_NE(r, nullptr);
  EXPECT_NEAR(r->alpha_us, 10.0, 0.01);
  EXPECT_NEAR(r->busbw_gbs, 50.0, 0.5);
  EXPECT_EQ(c.collective(Collective::all_reduce, false), nullptr);
}

}  // namespace
}  // namespace ptdp
