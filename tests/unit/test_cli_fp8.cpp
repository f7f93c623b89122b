// FP8 is out of scope for now: `ptdp project` refuses every route to it, the
// plan's precision (with or without a search) and a calibration measured in fp8.
#include <gtest/gtest.h>

#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;

nlohmann::json gpt_in(const std::string& precision) {
  auto j = nlohmann::json::parse(R"({
    "model": {"layers": 24, "hidden": 2304, "heads": 24, "seq_len": 2048, "vocab": 51200},
    "plan": {"tp": 2, "pp": 2, "dp": 2, "micro_batch": 1, "global_batch": 64},
    "machine": "h100-80gb"})");
  j["plan"]["precision"] = precision;
  return j;
}

TEST(CliFp8, ProjectRefusesFp8PlansWithOrWithoutSearch) {
  ScratchDir dir("fp8");
  const auto config = dir.write("c.json", gpt_in("fp8").dump());
  for (const std::string search : {"", " --search", " --search --search-split --search-uneven --search-tp-overlap"}) {
    const auto r = test::run_command(test::ptdp_cli() + " project --config " + config.string() + search, dir);
    EXPECT_EQ(r.status, 2) << search;
    EXPECT_NE(r.err.find("plan.precision=\"fp8\" is out of scope"), std::string::npos) << search << ": " << r.err;
  }
}

TEST(CliFp8, ProjectRefusesACalibrationMeasuredInFp8) {
  ScratchDir dir("fp8-calibration");
  const auto config = dir.write("c.json", gpt_in("bf16").dump());
  const auto cal = dir.write("cal.json", R"({"schema": "ptdp.calibration/1", "precision": "fp8"})");
  const auto r = test::run_command(
      test::ptdp_cli() + " project --search --config " + config.string() + " --calibration " + cal.string(), dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("/precision"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fp8 is out of scope"), std::string::npos) << r.err;
  // The same table in bf16 is taken.
  const auto bf16 = dir.write("bf16.json", R"({"schema": "ptdp.calibration/1", "precision": "bf16",
                                              "machine": "h100-80gb", "memory_bandwidth_gbs": 3000})");
  EXPECT_EQ(test::run_command(test::ptdp_cli() + " project --config " + config.string() + " --calibration " +
                                  bf16.string(), dir).status, 0);
}

}  // namespace
}  // namespace ptdp
