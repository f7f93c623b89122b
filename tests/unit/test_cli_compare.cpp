// `ptdp compare` end to end: the table and the summary, the exit status of a
// regression, and every input the gate refuses to judge (exit 2).
#include <gtest/gtest.h>

#include "tests/cli_test_util.h"
#include "tests/compare_test_util.h"

namespace ptdp {
namespace {

using json = nlohmann::json;
using test::result;
using test::ScratchDir;
using test::sweep;
using test::sweep_point;

test::Run run_compare(const ScratchDir& dir, const json& base, const json& now, const std::string& options = "") {
  const auto b = dir.write("base.json", base.dump()), n = dir.write("new.json", now.dump());
  return test::run_command(test::ptdp_cli() + " compare " + b.string() + " " + n.string() + " " + options, dir);
}

TEST(CliCompare, IdenticalFilesPass) {
  ScratchDir dir("compare-same");
  const auto r = run_compare(dir, result("measured", 8, 150, 2), result("measured", 8, 150, 2), "--out c.json");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 matched, 0 regressed beyond 5%; 0 only in base, 0 only in new"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
  const auto j = json::parse(test::read_file(dir.path() / "c.json"));
  EXPECT_EQ(j["regressions"], 0);
  EXPECT_EQ(j["rows"].size(), 1u);
}

TEST(CliCompare, ATenPercentDropFailsAtFivePercent) {
  ScratchDir dir("compare-drop");
  const auto r = run_compare(dir, result("measured", 8, 150, 2), result("measured", 8, 135, 2), "--out c.json");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("t8 p2 d1 b1 v2 interleaved"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("150.0 → 135.0 (-10.0%)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("REGRESSION"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 matched, 1 regressed beyond 5%"), std::string::npos) << r.out;
  EXPECT_EQ(json::parse(test::read_file(dir.path() / "c.json"))["regressions"], 1);
}

TEST(CliCompare, TheSameDropPassesAtFifteenPercent) {
  ScratchDir dir("compare-drop15");
  const auto r = run_compare(dir, result("measured", 8, 150, 2), result("measured", 8, 135, 2), "--threshold 15");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("(-10.0%)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 matched, 0 regressed beyond 15%"), std::string::npos) << r.out;
}

TEST(CliCompare, MeasuredAgainstProjectedIsRefused) {
  ScratchDir dir("compare-mode");
  const auto r = run_compare(dir, result("measured", 8, 150, 2), result("projected", 8, 150, 2));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("mode differs"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("measured in BASE but projected in NEW"), std::string::npos) << r.err;
}

TEST(CliCompare, UnreadableInputIsRefused) {
  ScratchDir dir("compare-bad");
  const auto garbage = dir.write("garbage.json", "not json at all");
  const auto good = dir.write("good.json", result("measured", 8, 150, 2).dump());
  auto r = test::run_command(test::ptdp_cli() + " compare " + good.string() + " " + garbage.string(), dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("garbage.json: not valid JSON"), std::string::npos) << r.err;
  r = run_compare(dir, result("measured", 8, 150, 2), {{"schema", "ptdp.sweep/1"}});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("not a ptdp result: schema \"ptdp.sweep/1\""), std::string::npos) << r.err;
  r = test::run_command(test::ptdp_cli() + " compare " + good.string() + " missing.json", dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  r = test::run_command(test::ptdp_cli() + " compare " + good.string() + " " + good.string() + " --threshold -1", dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
}

TEST(CliCompare, SweepsListPointsOnOneSideAndStillPass) {
  ScratchDir dir("compare-sweep");
  const json base = sweep({sweep_point("(2,8)", 2, result("projected", 8, 100, 1))});
  const json now = sweep({sweep_point("(2,8)", 2, result("projected", 8, 99, 1)),
                          sweep_point("(4,8)", 4, result("projected", 8, 50, 2))});
  const auto r = run_compare(dir, base, now);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("only in NEW: fig:(4,8) (projected)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 matched, 0 regressed beyond 5%; 0 only in base, 1 only in new"), std::string::npos) << r.out;
}

TEST(CliCompare, NothingMatchedIsRefused) {
  ScratchDir dir("compare-nothing");
  const json base = sweep({sweep_point("(2,8)", 2, result("projected", 8, 100, 1))});
  const json now = sweep({sweep_point("(4,8)", 4, result("projected", 8, 100, 1))});
  const auto r = run_compare(dir, base, now);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("nothing was compared"), std::string::npos) << r.err;
}

// NEW's figures null, missing, a string, `"metrics": 7`, not finite: once "1 matched, 0 regressed" and exit 0.
TEST(CliCompare, AFigureThatIsNotAFinitePositiveNumberIsRefused) {
  ScratchDir dir("compare-figures");
  const json base = result("measured", 8, 150, 2);
  const std::vector<std::pair<json, std::string>> cases = {
      {nullptr, "NEW metrics.model_tflops_per_gpu is null"},
      {"150", "NEW metrics.model_tflops_per_gpu is not a number (got \"150\")"},
      {json::object(), "NEW metrics.model_tflops_per_gpu is not a number"},
      {-150.0, "NEW metrics.model_tflops_per_gpu is not a finite positive number"}};
  for (const auto& [value, says] : cases) {
    json now = base;
    now["metrics"]["model_tflops_per_gpu"] = value;
    const auto r = run_compare(dir, base, now);
    EXPECT_EQ(r.status, 2) << value << r.out << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("0 matched"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("NO VERDICT: 0 matched"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1 not comparable"), std::string::npos) << r.out;
  }
  json now = base;
  now["metrics"] = 7;
  auto r = run_compare(dir, base, now);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("NEW metrics is not an object (got 7)"), std::string::npos) << r.err;
  now = base;
  now["metrics"].erase("iteration_s");
  r = run_compare(dir, now, base);  // on BASE's side too
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("BASE metrics.iteration_s is missing"), std::string::npos) << r.err;
  // 1e999 overflows a double: refused by the reader (written as text, since JSON has no infinity to dump).
  now = base;
  now["metrics"]["model_tflops_per_gpu"] = 12345.5;
  std::string text = now.dump();
  text.replace(text.find("12345.5"), 7, "1e999");
  const auto b = dir.write("b.json", base.dump()), n = dir.write("inf.json", text);
  r = test::run_command(test::ptdp_cli() + " compare " + b.string() + " " + n.string(), dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("inf.json: /metrics/model_tflops_per_gpu: the number 1e999 overflows a double"), std::string::npos)
      << r.err;
}

// NaN passed CLI11's NonNegativeNumber and let a 50% regression through.
TEST(CliCompare, AThresholdThatIsNotAFinitePositiveNumberIsRefused) {
  ScratchDir dir("compare-threshold");
  for (const std::string t : {"nan", "0", "-1", "inf", "-inf", "five"}) {
    const auto r = run_compare(dir, result("measured", 8, 150, 2), result("measured", 8, 75, 2), "--threshold=" + t);
    EXPECT_EQ(r.status, 2) << t << r.out << r.err;
    EXPECT_NE(r.err.find("--threshold"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("finite positive"), std::string::npos) << r.err;
  }
  const auto r = run_compare(dir, result("measured", 8, 150, 2), result("measured", 8, 75, 2), "--threshold 0.5");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
}

// A sweep whose point failed in NEW: once "1 matched, 0 regressed" (the failed point skipped) and exit 0.
TEST(CliCompare, ASweepWithAFailedOrUnmeasuredPointIsNotZeroRegressed) {
  ScratchDir dir("compare-failed-point");
  const json base = sweep({sweep_point("a", 2, result("projected", 8, 100, 1)),
                           sweep_point("b", 4, result("projected", 8, 100, 1))});
  json failed = sweep_point("b", 4, nullptr);
  failed["reason"] = "killed by signal 9";
  auto r = run_compare(dir, base, sweep({sweep_point("a", 2, result("projected", 8, 100, 1)), failed}));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot judge fig:b (projected): NEW is failed (killed by signal 9)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("NO VERDICT: 1 matched"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 not comparable"), std::string::npos) << r.out;
  json unmeasured = sweep_point("c", 8, nullptr);  // only in NEW, never measured
  unmeasured["status"] = "refused";
  r = run_compare(dir, base, sweep({sweep_point("a", 2, result("projected", 8, 100, 1)),
                                    sweep_point("b", 4, result("projected", 8, 100, 1)), unmeasured}));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("fig:c (projected): NEW is refused"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ptdp
