// A sweep point against its "expect" bands: the verdict read through the
// metric accessor, and written into the point's record by its name.
#include <gtest/gtest.h>

#include "core/results/acceptance.h"
#include "core/results/metric_path.h"
#include "core/sweep/sweep_results.h"

namespace ptdp {
namespace {

using json = nlohmann::json;

PointRun run_of(double tflops, Outcome status = Outcome::ok) {
  return {ResultMode::projected, status, "", 0, {{"metrics", {{"model_tflops_per_gpu", tflops}}}}};
}

TEST(SweepAcceptance, BandsPassFailOrAreAbsent) {
  const json at_least_90 = {{"model_tflops_per_gpu", {{"min", 90}}}};
  EXPECT_EQ(acceptance(json::object(), run_of(100)), Acceptance::none);
  EXPECT_EQ(acceptance(at_least_90, run_of(100)), Acceptance::pass);
  EXPECT_EQ(acceptance(at_least_90, run_of(80)), Acceptance::fail);
  EXPECT_EQ(acceptance({{"model_tflops_per_gpu", {{"max", 90}}}}, run_of(100)), Acceptance::fail);
  EXPECT_EQ(acceptance(at_least_90, run_of(100, Outcome::timeout)), Acceptance::fail);  // did not run ok
  EXPECT_EQ(acceptance({{"mfu", {{"min", 0}}}}, run_of(100)), Acceptance::fail);        // the figure is missing
  EXPECT_THROW(acceptance({{"tflops", {{"min", 0}}}}, run_of(100)), UnknownMetric);     // load_sweep refuses it first
}

TEST(SweepAcceptance, TheRecordSpellsTheVerdictByItsName) {
  EXPECT_EQ(to_string(Acceptance::pass), "pass");
  EXPECT_EQ(to_string(Acceptance::fail), "fail");
  Sweep sweep;
  sweep.name = "s";
  SweepPoint point;
  point.expect = {{"model_tflops_per_gpu", {{"min", 90}}}};
  json r = point_record(sweep, point, run_of(100));
  EXPECT_EQ(r["acceptance"], "pass");
  EXPECT_EQ(r["value"], 100.0);
  EXPECT_EQ(point_record(sweep, point, run_of(80))["acceptance"], "fail");
  point.expect = json::object();
  EXPECT_TRUE(point_record(sweep, point, run_of(80))["acceptance"].is_null());
}

}  // namespace
}  // namespace ptdp
