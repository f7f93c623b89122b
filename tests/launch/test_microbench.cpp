// The CPU microbenchmarks run for real (briefly): the kernel suite's JSON has
// every counter; the collective suite under mpirun -np 2 checks every timed run
// (zero `wrong`) and reports busbw = algbw · factor; a calibration made from
// both drives `ptdp project` and is named in its result.
#include <gtest/gtest.h>

#include "core/layer_ops/op_kind.h"
#include "tests/cli_test_util.h"

#if defined(PTDP_BENCH_KERNELS) && defined(PTDP_BENCH_COLLECTIVES)

namespace ptdp {
namespace {

using nlohmann::json;

TEST(Microbench, CpuSuitesRunAndCalibrateTheProjection) {
  test::ScratchDir dir("microbench");
  const auto k = test::run_command(std::string(PTDP_BENCH_KERNELS) +
                                       " --benchmark_min_time=0.01 --benchmark_out=kernels.json"
                                       " --benchmark_out_format=json --benchmark_filter='gemm/q_fwd|gemm/proj_|layernorm|adamw|layer/fwd|head/|embedding/fwd|attention/core_fwd/b'",
                                   dir);
  ASSERT_EQ(k.status, 0) << k.err;
  const json kernels = json::parse(test::read_file(dir.path() / "kernels.json"));
  EXPECT_EQ(kernels["context"]["ptdp_device"], "cpu");
  EXPECT_FALSE(kernels["context"]["ptdp_commit"].get<std::string>().empty());
  int gemms = 0, ends = 0;
  for (const auto& run : kernels["benchmarks"]) {
    EXPECT_FALSE(run.value("error_occurred", false)) << run.dump();
    const std::string label = run["label"], name = run["name"];
    const auto kind = op_kind_from_name(label);  // the op's kind: the key `ptdp calibrate` reads
    const bool gemm = kind && kind_traits(*kind).basis == CostBasis::gemm;
    const bool computes = gemm || kind == OpKind::attention_forward || name.rfind("layer/", 0) == 0 || name.rfind("head/", 0) == 0;
    if (computes) {
      EXPECT_GT(run["TFLOP/s"].get<double>(), 0) << run["name"];
      EXPECT_GT(run["pct_peak"].get<double>(), 0) << run["name"];
    }
    if ((kind && kind_traits(*kind).basis == CostBasis::memory) || label == "optimizer") {
      EXPECT_GT(run["GB/s"].get<double>(), 0) << run["name"];
    }
    gemms += gemm ? 1 : 0;
    ends += name.rfind("head/", 0) == 0 || name.rfind("embedding/fwd", 0) == 0 ? 1 : 0;
    if (name.rfind("layer/fwd", 0) == 0) {
      EXPECT_EQ(run["layers_run"].get<double>(), 2) << "the default model's two layers, in order";
    }
  }
  EXPECT_EQ(gemms, 3);  // q's forward and proj's data and weight gradients: proj's forward and q's gradients, of
                        // the same sizes, are the same benchmarks
  EXPECT_EQ(ends, 3);   // embedding forward, head forward and backward
  const auto c = test::run_command(std::string(PTDP_MPIRUN) + " -np 2 " + PTDP_BENCH_COLLECTIVES +
                                       " --max-bytes 4096 --config " + PTDP_SOURCE_DIR + "/endtoend/configs/tiny.json"
                                       " --benchmark_min_time=0.01 --benchmark_out=collectives.json --benchmark_out_format=json",
                                   dir);
  ASSERT_EQ(c.status, 0) << c.err;
  const json collectives = json::parse(test::read_file(dir.path() / "collectives.json"));
  EXPECT_FALSE(collectives["context"]["ptdp_mpi"].get<std::string>().empty());
  int runs = 0;
  for (const auto& run : collectives["benchmarks"]) {
    ++runs;
    EXPECT_EQ(run["wrong"].get<double>(), 0) << run["name"];
    EXPECT_EQ(run["ranks"].get<double>(), 2);
    EXPECT_NEAR(run["busbw_gbs"].get<double>(), run["algbw_gbs"].get<double>() * run["bus_factor"].get<double>(),
                1e-9 * run["algbw_gbs"].get<double>());
  }
  EXPECT_EQ(runs, 5 * 5 + 4);  // 5 collectives at 8, 32, 128, 512, 2048 B; 4 sizes of the config
  const auto cal = test::run_command(test::ptdp_cli() + " calibrate kernels.json collectives.json --machine cpu-host"
                                                        " --out cpu.json",
                                     dir);
  ASSERT_EQ(cal.status, 0) << cal.err;
  EXPECT_NE(cal.out.find("GEMM"), std::string::npos) << cal.out;
  const auto p = test::run_command(test::ptdp_cli() + " project --config " + PTDP_SOURCE_DIR +
                                       "/endtoend/configs/small.json --calibration cpu.json --out p.json",
                                   dir);
  ASSERT_EQ(p.status, 0) << p.err;
  const json projected = json::parse(test::read_file(dir.path() / "p.json"));
  EXPECT_EQ(projected["projection"]["calibration"], "cpu");
  EXPECT_GT(projected["metrics"]["model_tflops_per_gpu"].get<double>(), 0);
}

}  // namespace
}  // namespace ptdp

#endif
