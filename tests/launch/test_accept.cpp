// `ptdp accept` on the CPU: the cpu-host bands pass; a band above what the
// machine can do fails (exit 1, named in the JSON and JUnit reports); a step
// that cannot start is a recorded failure and the suite goes on.
#include <gtest/gtest.h>

#include "tests/accept_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;

#ifdef PTDP_BENCH_KERNELS
constexpr bool kBenchmarksBuilt = true;
#else
constexpr bool kBenchmarksBuilt = false;
#endif

json report_of(const test::ScratchDir& dir) { return json::parse(test::read_file(dir.path() / "out" / "accept.json")); }

const json& check_of(const json& report, const std::string& metric) {
  for (const json& c : report["checks"])
    if (c["metric"] == metric) return c;
  throw std::runtime_error("no check of " + metric);
}

TEST(Accept, CpuHostPassesItsBands) {
  if (!kBenchmarksBuilt) GTEST_SKIP() << "the benchmark programs are not built (Google Benchmark not found)";
  test::ScratchDir dir("accept-pass");
  const auto r = test::run_command(test::ptdp_cli() + " accept --machine cpu-host --out out", dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json report = report_of(dir);
  EXPECT_EQ(report["verdict"], "pass");
  EXPECT_EQ(report["machine"]["name"], "cpu-host");
  EXPECT_FALSE(report["software"]["commit"].get<std::string>().empty());
  for (const char* metric : {"gemm_tflops", "attention_tflops", "allreduce_busbw_gbs_intra", "train_tflops_per_gpu",
                             "train_llama_tflops_per_gpu"}) {
    const json& c = check_of(report, metric);
    EXPECT_EQ(c["status"], "pass") << c.dump();
    EXPECT_GT(c["value"].get<double>(), 0) << c.dump();
    EXPECT_FALSE(c["band"]["source"].get<std::string>().empty());
  }
  EXPECT_TRUE(check_of(report, "train_tflops_per_gpu")["projected"].is_number());
  EXPECT_TRUE(check_of(report, "train_llama_tflops_per_gpu")["projected"].is_number());
  for (const char* metric : {"allreduce_busbw_gbs_inter", "weak_scaling_efficiency"})
    EXPECT_EQ(check_of(report, metric)["status"], "skipped");
  EXPECT_NE(r.out.find("[7/7] weak_scaling: skipped"), std::string::npos) << r.out;
  const std::string junit = test::read_file(dir.path() / "out" / "accept-junit.xml");
  EXPECT_NE(junit.find("failures=\"0\""), std::string::npos) << junit;
  EXPECT_NE(test::read_file(dir.path() / "out" / "accept.md").find(": PASS"), std::string::npos);
}

TEST(Accept, ABandAboveTheMachineFailsAndIsNamed) {
  if (!kBenchmarksBuilt) GTEST_SKIP() << "the benchmark programs are not built (Google Benchmark not found)";
  test::ScratchDir dir("accept-fail");
  json profile = test::cpu_host_profile();
  profile["acceptance"]["gemm_tflops"] = {{"expected", 1000}, {"tolerance", 0.1}, {"source", "a test: 1 PFLOP/s"}};
  const auto file = test::write_profile(dir, "too-fast", profile);
  const auto r = test::run_command(test::ptdp_cli() + " accept --machine " + file.string() + " --out out", dir);
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  const json report = report_of(dir);
  EXPECT_EQ(report["verdict"], "fail");
  EXPECT_EQ(check_of(report, "gemm_tflops")["status"], "fail");
  EXPECT_EQ(check_of(report, "train_tflops_per_gpu")["status"], "pass");
  const std::string junit = test::read_file(dir.path() / "out" / "accept-junit.xml");
  EXPECT_NE(junit.find("failures=\"1\""), std::string::npos) << junit;
  const auto gemm = junit.find("<testcase name=\"gemm_tflops\"");
  ASSERT_NE(gemm, std::string::npos) << junit;
  EXPECT_EQ(junit.find("<failure message=\"gemm_tflops = "), junit.find("<failure", gemm)) << junit;
}

// A launcher that starts nothing (`false`): every multi-rank step fails with
// its exit status recorded, the single-process kernel steps still run.
TEST(Accept, AStepThatFailsIsRecordedAndTheSuiteGoesOn) {
  if (!kBenchmarksBuilt) GTEST_SKIP() << "the benchmark programs are not built (Google Benchmark not found)";
  test::ScratchDir dir("accept-step-fails");
  const auto r = test::run_command(test::ptdp_cli() + " accept --machine cpu-host --launcher 'false {cmd}' --out out", dir);
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  const json report = report_of(dir);
  EXPECT_EQ(check_of(report, "gemm_tflops")["status"], "pass");
  for (const char* metric : {"allreduce_busbw_gbs_intra", "train_tflops_per_gpu",
                             "train_llama_tflops_per_gpu"}) {
    const json& c = check_of(report, metric);
    EXPECT_EQ(c["status"], "failed") << c.dump();
    EXPECT_NE(c["reason"].get<std::string>().find("exit 1"), std::string::npos) << c.dump();
  }
}

}  // namespace
}  // namespace ptdp
