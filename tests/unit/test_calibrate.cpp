// Bus-bandwidth factors (nccl-tests' definitions) and `calibrate`: benchmark
// JSON to a calibration table that moves a projection the way it should.
#include <gtest/gtest.h>

#include "core/accounting/bus_bandwidth.h"
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

Config gpt_8l_on_a100() {
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
    runs.push_back({{"name", "gemm/" + std::to_string(runs.size())}, {"run_type", "iteration"}, {"label", "linear_forward"}, {"time_unit", "ms"},
                    {"real_time", 1e3 * slowdown * dev.analytical_gemm_seconds(g)}, {"m", g.m}, {"n", g.n}, {"k", g.k},
                    {"batch", 1}});
  runs.push_back({{"name", "layernorm/ln1_fwd"}, {"run_type", "iteration"}, {"label", "layernorm_forward"}, {"time_unit", "ms"},
                  {"real_time", 1.0}, {"bytes", 1e9}});  // 1 GB in 1 ms: 1000 GB/s
  return {{"context", {{"ptdp_hardware", "test"}, {"ptdp_precision", "bf16"}, {"ptdp_machine", "a100-80gb"}}},
          {"benchmarks", runs}};
}

TEST(Calibrate, ASlowerGemmTableGivesASlowerProjection) {
  test::ScratchDir dir("calibrate");
  const Config c = gpt_8l_on_a100();
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
  const auto file = dir.write("coll.json", json({{"context", {{"ptdp_machine", "a100-80gb"}}}, {"benchmarks", runs}}).dump());
  const Calibration c = calibrate({file}, "a100-80gb");
  const CollectiveRate* r = c.collective(Collective::all_reduce, true);
  ASSERT_NE(r, nullptr);
  EXPECT_NEAR(r->alpha_us, 10.0, 0.01);
  EXPECT_NEAR(r->busbw_gbs, 50.0, 0.5);
  EXPECT_EQ(c.collective(Collective::all_reduce, false), nullptr);
}

// Repetitions (--benchmark_repetitions) and repeated attempts' files: each
// benchmark counts by its fastest run; aggregates (even with a NaN in them) and
// failed repetitions are not samples.
TEST(Calibrate, EachBenchmarkCountsByItsFastestRepetition) {
  test::ScratchDir dir("calibrate-reps");
  json runs = json::array();
  const auto rep = [](double ms, const char* type, bool failed) {
    json r = {{"name", "gemm/a"}, {"run_name", "gemm/a"}, {"run_type", type}, {"label", "linear_forward"}, {"time_unit", "ms"},
              {"real_time", ms}, {"m", 64}, {"n", 64}, {"k", 64}};
    if (failed) r["error_occurred"] = true;
    return r;
  };
  for (const auto& r : {rep(3, "iteration", false), rep(0.5, "iteration", true), rep(2, "iteration", false),
                        rep(2.5, "iteration", false), rep(0.1, "aggregate", false)})
    runs.push_back(r);
  std::string text = json({{"context", {{"ptdp_machine", "a100-80gb"}}}, {"benchmarks", runs}}).dump();
  // Google Benchmark's cv of an always-0 counter over repetitions: a bare NaN.
  text.insert(text.rfind(']'), R"(, {"name": "gemm/a_cv", "run_type": "aggregate", "wrong": NaN, "real_time": 0})");
  const auto first = dir.write("reps.json", text);
  const Calibration c = calibrate({first}, "a100-80gb");
  ASSERT_EQ(c.gemms.size(), 1u);
  EXPECT_DOUBLE_EQ(c.gemms[0].seconds, 2e-3);
  // A second attempt's file: the fastest over both counts, once.
  const auto second = dir.write("again.json", json({{"context", {{"ptdp_machine", "a100-80gb"}}}, {"benchmarks", {rep(1.5, "iteration", false)}}}).dump());
  const Calibration both = calibrate({first, second}, "a100-80gb");
  ASSERT_EQ(both.gemms.size(), 1u);
  EXPECT_DOUBLE_EQ(both.gemms[0].seconds, 1.5e-3);
}

// Ranks of a CPU run share the host: a kernel file measured beside another
// busy copy (ptdp_concurrent 2) gives host_sharing[2], the median slowdown,
// and no samples of its own; the projection slows compute by it only where
// two ranks share a node.
TEST(Calibrate, KernelsMeasuredBesideAnotherCopyPriceRanksSharingTheHost) {
  test::ScratchDir dir("calibrate-sharing");
  Config c = gpt_8l_on_a100();
  json lone = gemm_benchmarks(c, 1.0), shared = gemm_benchmarks(c, 1.0);
  for (std::size_t i = 0; i < shared["benchmarks"].size(); ++i)  // slowdowns 1.2, 1.5, 1.5, 1.5, 3: median 1.5
    shared["benchmarks"][i]["real_time"] = shared["benchmarks"][i]["real_time"].get<double>() * (i == 0 ? 1.2 : i == 4 ? 3 : 1.5);
  shared["context"]["ptdp_concurrent"] = "2";
  const Calibration alone = calibrate({dir.write("lone.json", lone.dump())}, "a100-80gb");
  const Calibration both = calibrate({dir.write("lone.json", lone.dump()), dir.write("shared.json", shared.dump())}, "a100-80gb");
  EXPECT_EQ(both.gemms.size(), alone.gemms.size());
  ASSERT_EQ(both.host_sharing.size(), 1u);
  EXPECT_DOUBLE_EQ(both.host_sharing.at(2), 1.5);
  EXPECT_DOUBLE_EQ(both.host_sharing_at(1), 1.0);
  EXPECT_DOUBLE_EQ(both.host_sharing_at(4), 1.5);
  const Calibration again = Calibration::from_json(both.to_json(), "round trip");
  EXPECT_EQ(again.host_sharing, both.host_sharing);

  // One rank a node: no sharing. Two data-parallel ranks on one node: compute 1.5x.
  c.machine.gpus_per_node = 1, c.plan.dp = 2, c.plan.global_batch = 16;
  EXPECT_DOUBLE_EQ(project(c, &again).iteration_s, project(c, &alone).iteration_s);
  c.machine.gpus_per_node = 2;
  const Projection shared_host = project(c, &again), own_host = project(c, &alone);
  // Kernel launches are not slowed: about 0.2% of this compute on the A100 profile.
  EXPECT_NEAR(shared_host.breakdown.compute / own_host.breakdown.compute, 1.5, 0.005);

  EXPECT_THROW(calibrate({dir.write("shared_only.json", shared.dump())}, "a100-80gb"), std::runtime_error);
  json bad = both.to_json();
  bad["host_sharing"] = {{"1", 2.0}};
  try {
    Calibration::from_json(bad, "cal.json");
    ADD_FAILURE() << "a rank count of 1 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cal.json: /host_sharing/1: a rank count of at least 2"), std::string::npos) << e.what();
  }
}

// A table measures one machine: `ptdp project` and `ptdp slice` refuse it for
// a config on another (exit 2, before anything is measured), take it for its own.
TEST(Calibrate, ATableOfAnotherMachineIsRefusedForThisOne) {
  test::ScratchDir dir("calibrate-machine");
  Calibration table;
  table.name = "cal";
  table.machine = "a100-80gb";
  table.memory_bandwidth_gbs = 1000;
  dir.write("cal.json", table.to_json().dump());
  dir.write("tiny.json", test::tiny_config_json().dump());  // cpu-host
  for (const char* command : {"project --config tiny.json", "slice --config tiny.json"}) {
    const auto r = test::run_command(test::ptdp_cli() + " " + command + " --calibration cal.json", dir);
    EXPECT_EQ(r.status, 2) << command << r.out << r.err;
    EXPECT_NE(r.err.find("calibration cal measured machine a100-80gb, not cpu-host"), std::string::npos) << r.err;
  }
  table.machine = "cpu-host";
  dir.write("cal.json", table.to_json().dump());
  const auto r = test::run_command(test::ptdp_cli() + " project --config tiny.json --calibration cal.json", dir);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

// Runs are matched to costs by the op kind they are labelled with
// (core/layer_ops/op_kind.h) and the cost basis of that kind: the unfused attention
// core with fused ops gives its two batched GEMM shapes, each a sixth of forward
// plus backward; without fused ops it gives none; a flash core its rate; a fused
// op (GEMM and element-wise) and an unknown label nothing.
TEST(Calibrate, RunsCountByTheirOpKind) {
  test::ScratchDir dir("calibrate-kinds");
  const auto core = [](const char* kind, double ms, int flash, int fused) {
    return json{{"name", std::string("attention/") + kind}, {"run_type", "iteration"}, {"label", kind},
                {"time_unit", "ms"}, {"real_time", ms}, {"flash", flash}, {"fused_ops", fused}, {"flops", 6e9},
                {"b", 2}, {"s", 64}, {"heads", 4}, {"d", 32}, {"kv_heads", 4}};
  };
  json runs = json::array({core("attention_forward", 1.0, 0, 1), core("attention_backward", 2.0, 0, 1),
                           {{"name", "bias_gelu/fc1_fwd"}, {"run_type", "iteration"}, {"label", "linear_gelu_forward"},
                            {"time_unit", "ms"}, {"real_time", 1.0}, {"m", 8}, {"n", 8}, {"k", 8}},
                           {{"name", "gemm/old"}, {"run_type", "iteration"}, {"label", "gemm"}, {"time_unit", "ms"},
                            {"real_time", 1.0}, {"m", 8}, {"n", 8}, {"k", 8}}});
  const auto file = [&dir](const std::string& name, const json& r) {
    return dir.write(name, json({{"context", {{"ptdp_machine", "a100-80gb"}}}, {"benchmarks", r}}).dump());
  };
  const Calibration c = calibrate({file("core.json", runs)}, "a100-80gb");
  ASSERT_EQ(c.gemms.size(), 2u);  // the core's two shapes; the fused op and the unknown label give none
  EXPECT_EQ(c.gemms[0].shape.m, 64);
  EXPECT_EQ(c.gemms[0].shape.k, 32);
  EXPECT_EQ(c.gemms[1].shape.k, 64);
  EXPECT_EQ(c.gemms[0].shape.batch, 8);
  EXPECT_DOUBLE_EQ(c.gemms[0].seconds, 3e-3 / 6);
  json unfused_ops = runs;
  unfused_ops[0]["fused_ops"] = 0, unfused_ops[1]["fused_ops"] = 0;
  unfused_ops.push_back(core("attention_forward", 1.0, 1, 1));  // flash: 6 GFLOP in 1 ms
  unfused_ops.back()["name"] = "attention/flash";
  const Calibration f = calibrate({file("flash.json", unfused_ops)}, "a100-80gb");
  EXPECT_TRUE(f.gemms.empty());
  EXPECT_DOUBLE_EQ(f.flash_attention_tflops, 6.0);
  EXPECT_THROW(calibrate({file("none.json", json::array({runs[2], runs[3]}))}, "a100-80gb"), std::runtime_error);
}

// The memory-bound ops' bandwidth is their bytes over their time together (1 GB
// in 1 ms and 1 GB in 3 ms: 500 GB/s, not either op's); an op that moved no
// bytes gives none.
TEST(Calibrate, MemoryBoundOpsGiveTheirBandwidthTogether) {
  test::ScratchDir dir("calibrate-bandwidth");
  const auto op = [](const char* name, const char* kind, double ms) {
    return json{{"name", name}, {"run_type", "iteration"}, {"label", kind}, {"time_unit", "ms"}, {"real_time", ms},
                {"bytes", 1e9}};
  };
  json runs = json::array({op("layernorm/ln1_fwd", "layernorm_forward", 1.0), op("add/residual1_bwd", "add", 3.0)});
  runs.push_back({{"name", "add/kv_sum_bwd"}, {"run_type", "iteration"}, {"label", "add"}, {"time_unit", "ms"},
                  {"real_time", 5.0}});
  const auto file = dir.write("memory.json", json({{"context", {{"ptdp_machine", "a100-80gb"}}}, {"benchmarks", runs}}).dump());
  EXPECT_DOUBLE_EQ(calibrate({file}, "a100-80gb").memory_bandwidth_gbs, 500.0);
}

}  // namespace
}  // namespace ptdp
