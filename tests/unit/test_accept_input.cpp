// `ptdp accept` refuses bad input with exit 2 before any step runs, writing
// nothing; and a profile's acceptance bands are read strictly.
#include <gtest/gtest.h>

#include "core/config/config.h"
#include "tests/accept_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;

TEST(AcceptanceBand, HoldsAtAndAboveExpectedTimesOneMinusTolerance) {
  const AcceptanceBand band{100, 0.2, "test"};
  EXPECT_DOUBLE_EQ(band.lowest(), 80);
  EXPECT_TRUE(band.holds(80));
  EXPECT_TRUE(band.holds(500));
  EXPECT_FALSE(band.holds(79.9));
}

TEST(AcceptanceBand, ProfileBandsAreReadAndCheckedStrictly) {
  json p = test::cpu_host_profile();
  p["acceptance"] = {{"gemm_tflops", {{"expected", 0.05}, {"tolerance", 0.5}, {"source", "a test"}}}};
  const Machine m = machine_from_json(p, "machine");
  ASSERT_EQ(m.acceptance.count("gemm_tflops"), 1u);
  EXPECT_DOUBLE_EQ(m.acceptance.at("gemm_tflops").lowest(), 0.025);
  const auto refused_field = [&](json band, const std::string& metric = "gemm_tflops") {
    json q = test::cpu_host_profile();
    q["acceptance"] = {{metric, band}};
    try {
      machine_from_json(q, "machine");
    } catch (const ConfigRefused& e) {
      return e.errors().front().field;
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(refused_field({{"expected", 1}, {"tolerance", 0.1}}), "machine.acceptance.gemm_tflops.source");
  EXPECT_EQ(refused_field({{"tolerance", 0.1}, {"source", "s"}}), "machine.acceptance.gemm_tflops.expected");
  EXPECT_EQ(refused_field({{"expected", 1}, {"source", "s"}}), "machine.acceptance.gemm_tflops.tolerance");
  EXPECT_EQ(refused_field({{"expected", 1}, {"tolerance", 1.0}, {"source", "s"}}), "machine.acceptance.gemm_tflops.tolerance");
  EXPECT_EQ(refused_field({{"expected", 1}, {"tolerance", -0.1}, {"source", "s"}}), "machine.acceptance.gemm_tflops.tolerance");
  EXPECT_EQ(refused_field({{"expected", 0}, {"tolerance", 0.1}, {"source", "s"}}), "machine.acceptance.gemm_tflops.expected");
  EXPECT_EQ(refused_field({{"expected", 1}, {"tolerance", 0.1}, {"source", " "}}), "machine.acceptance.gemm_tflops.source");
  EXPECT_EQ(refused_field({{"expected", 1}, {"tolerance", 0.1}, {"source", "s"}, {"note", 1}}),
            "machine.acceptance.gemm_tflops.note");
  EXPECT_EQ(refused_field({{"expected", 1}, {"tolerance", 0.1}, {"source", "s"}}, "gemm_tflop"),
            "machine.acceptance.gemm_tflop");
}

TEST(AcceptanceBand, EveryShippedProfileHasSourcedBands) {
  for (const char* name : {"cpu-host", "a100-80gb", "h100-80gb", "h200-141gb"}) {
    const Machine m = load_machine(name, default_machines_dir());
    EXPECT_FALSE(m.acceptance.empty()) << name;
    for (const auto& [metric, band] : m.acceptance) EXPECT_FALSE(band.source.empty()) << name << " " << metric;
  }
}

// Runs `ptdp accept ARGS --out DIR/out`: exit 2, the option or field named on
// stderr, and nothing written.
void expect_refused(const test::ScratchDir& dir, const std::string& args, const std::string& named) {
  const auto r = test::run_command(test::ptdp_cli() + " accept " + args + " --out out", dir);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
  EXPECT_NE(r.err.find(named), std::string::npos) << args << "\n" << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out")) << args;
}

TEST(AcceptInput, RefusedBeforeAnyStepWithNothingWritten) {
  test::ScratchDir dir("accept-input");
  json no_bands = test::cpu_host_profile();
  no_bands.erase("acceptance");
  const auto bare = test::write_profile(dir, "bare", no_bands);
  json bad = test::cpu_host_profile();
  bad["acceptance"] = {{"gemm_tflops", {{"expected", 1}, {"tolerance", 1.5}, {"source", "s"}}}};
  const auto bad_band = test::write_profile(dir, "bad-band", bad);
  bad["acceptance"] = {{"gemm_tflops", {{"expected", 1}, {"tolerance", 0.1}}}};
  const auto no_source = test::write_profile(dir, "no-source", bad);
  expect_refused(dir, "--machine no-such-profile", "no-such-profile");
  expect_refused(dir, "--machine " + bare.string(), "no acceptance bands");
  expect_refused(dir, "--machine bare --machines-dir " + dir.path().string(), "no acceptance bands");
  expect_refused(dir, "--machine " + bad_band.string(), "acceptance.gemm_tflops.tolerance");
  expect_refused(dir, "--machine " + no_source.string(), "acceptance.gemm_tflops.source");
  expect_refused(dir, "--machine cpu-host --nodes 0", "--nodes");
  expect_refused(dir, "--machine cpu-host --launcher 'run {cmd} {gpus}'", "--launcher");
  dir.write("a-file", "not a folder");
  const auto r = test::run_command(test::ptdp_cli() + " accept --machine cpu-host --out a-file/reports", dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ptdp
