// The plausibility checks the gate and `sweep --collect` share: each figure
// alone (finite, positive, normal, bounded), the figures together (median and
// samples, TFLOP/s and FLOPs, the peak), a result's mode, two layouts.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/results/plausibility.h"
#include "core/sim/projector.h"
#include "tests/compare_test_util.h"

namespace ptdp {
namespace {

using json = nlohmann::json;

// The problems of `r`, "field rule" a line.
std::string problems_of(const json& r) {
  std::string out;
  for (const FigureProblem& p : implausible_figures(r)) out += p.field + " " + p.rule + "\n";
  return out;
}

// A measured result of 8·2 GPUs at `tflops` with these samples (its median theirs, its FLOPs what they say).
json sampled_run(double tflops, const std::vector<double>& samples) {
  json r = test::result("measured", 8, tflops, samples[samples.size() / 2]);
  r["metrics"]["iteration_s"]["samples"] = samples;
  return r;
}

TEST(Plausibility, AFigureMustBeFinitePositiveNormalAndBounded) {
  EXPECT_EQ(positive_figure_problem(1.5, 10), "");
  EXPECT_EQ(positive_figure_problem(10, 10), "");
  EXPECT_EQ(positive_figure_problem(0, 10), "is not a finite positive number (got 0)");
  EXPECT_EQ(positive_figure_problem(-2, 10), "is not a finite positive number (got -2)");
  EXPECT_EQ(positive_figure_problem(std::nan(""), 10), "is not a finite positive number (got nan)");
  EXPECT_EQ(positive_figure_problem(INFINITY, 10), "is not a finite positive number (got inf)");
  EXPECT_EQ(positive_figure_problem(std::numeric_limits<double>::denorm_min(), 10), "is denormal (got 4.94066e-324)");
  EXPECT_EQ(positive_figure_problem(1e300, 10), "is above 10 (got 1e+300)");
}

TEST(Plausibility, ARunsOwnFiguresPass) {
  EXPECT_EQ(problems_of(test::result("measured", 8, 150, 2)), "");
  EXPECT_EQ(problems_of(sampled_run(100, {0.9, 1.0, 1.1})), "");
}

TEST(Plausibility, EachGatedFigureIsCheckedAlone) {
  json r = test::result("measured", 8, 150, 2);
  r["metrics"]["model_tflops_per_gpu"] = 1e-310;
  EXPECT_EQ(problems_of(r), "metrics.model_tflops_per_gpu is denormal (got 1e-310)\n");
  r = test::result("measured", 8, 150, 2);
  r["metrics"]["model_tflops_per_gpu"] = 2e6;  // twice kMaxRate: a thousand times an H100, twice over
  EXPECT_EQ(problems_of(r), "metrics.model_tflops_per_gpu is above 1e+06 (got 2e+06)\n");
  r = test::result("measured", 8, 150, 2);
  r["metrics"]["iteration_s"]["median"] = 1e300;
  EXPECT_EQ(problems_of(r), "metrics.iteration_s.median is above 1e+06 (got 1e+300)\n");
  r = sampled_run(100, {0.9, 1.0, 1.1});
  r["metrics"]["iteration_s"]["samples"][1] = 5e-324;
  EXPECT_EQ(problems_of(r), "metrics.iteration_s.samples[1] is denormal (got 4.94066e-324)\n");
  r = test::result("measured", 8, 150, 2);
  r["metrics"].erase("flops_per_iteration");
  EXPECT_EQ(problems_of(r), "metrics.flops_per_iteration is missing\n");
}

TEST(Plausibility, AMedianMustBeItsSamplesMedian) {
  json r = sampled_run(100, {0.9, 1.0, 1.1});
  r["metrics"]["iteration_s"]["samples"] = {0.9, 1.0, 1.1, 5.0};  // median now 1.05
  EXPECT_EQ(problems_of(r), "metrics.iteration_s.median 1 is not the median of its 4 samples (1.05)\n");
  r["metrics"]["iteration_s"]["samples"] = {0.5, 1.0 + 1e-12, 2.0};  // within the rounding of ten digits
  EXPECT_EQ(problems_of(r), "");
}

TEST(Plausibility, TflopsMustFollowFromTheFlopsAndTheMedian) {
  json r = test::result("measured", 8, 150, 2);
  r["metrics"]["model_tflops_per_gpu"] = 300.0;  // twice what its 4.8e15 FLOPs on 16 GPUs in 2 s give
  EXPECT_EQ(problems_of(r), "metrics.model_tflops_per_gpu 300 does not follow from flops_per_iteration.model / "
                            "(t·p·d · median iteration) = 150\n");
  r = test::result("measured", 8, 150, 2);
  r["plan"]["dp"] = 0;
  EXPECT_EQ(problems_of(r), "plan.dp is not a parallel size in [1, 1048576] (got 0)\n");
}

TEST(Plausibility, NoIterationIsFasterThanThePeakAllows) {
  json r = sampled_run(100, {0.9, 1.0, 1.1});
  r["plan"]["precision"] = "bf16";
  r["machine"]["peak_tflops"] = {{"bf16", 312.0}};
  EXPECT_EQ(problems_of(r), "");  // 100 TFLOP/s at the median, 111 at the fastest: below 312
  r["machine"]["peak_tflops"]["bf16"] = 105.0;  // the fastest sample's 111 TFLOP/s is above it
  const std::string got = problems_of(r);
  EXPECT_EQ(got.rfind("metrics.iteration_s.samples an iteration of 0.9 s is faster than its 1.6e+15 FLOPs allow on 16 "
                      "GPUs at the machine's peak of 105 TFLOP/s (", 0),
            0u)
      << got;
  r["metrics"]["iteration_s"].erase("samples");  // the median alone, at 100 TFLOP/s against a peak of 90
  r["machine"]["peak_tflops"]["bf16"] = 90.0;
  EXPECT_NE(problems_of(r).find("metrics.iteration_s.median an iteration of 1 s is faster"), std::string::npos);
}

TEST(Plausibility, AResultFiledUnderAnotherModeContradictsIt) {
  EXPECT_EQ(mode_contradiction(test::result("measured", 8, 150, 2), ResultMode::measured), "");
  EXPECT_EQ(mode_contradiction(test::result("projected", 8, 150, 2), ResultMode::measured),
            "is filed as measured but its result says projected");
  json r = test::result("measured", 8, 150, 2);
  r["projection"] = {{"calibration", nullptr}};
  EXPECT_EQ(mode_contradiction(r, ResultMode::measured),
            "is filed as measured but carries a projection's provenance (\"projection\")");
  EXPECT_EQ(mode_contradiction(json(3), ResultMode::measured), "");  // not a result: the readers refuse it
}

TEST(Plausibility, LayoutsDifferFieldByField) {
  const json a = test::result("measured", 8, 150, 2);
  EXPECT_EQ(layout_difference(a, a, "BASE", "NEW"), "");
  json b = a;
  b["plan"]["dp"] = 2;
  b["plan"]["schedule"] = "1f1b";
  b["model"]["layers"] = 2.0;  // the same number, another JSON type: no difference
  b["plan"]["seed"] = 7;       // not a layout field
  EXPECT_EQ(layout_difference(a, b, "BASE", "NEW"),
            "plan.dp 1 in BASE, 2 in NEW; plan.schedule \"interleaved\" in BASE, \"1f1b\" in NEW");
  b = a;
  b["plan"].erase("pp");
  EXPECT_EQ(layout_difference(a, b, "A", "B"), "plan.pp 2 in A, absent in B");
}

}  // namespace
}  // namespace ptdp

namespace ptdp {
namespace {

// A measured result of the tiny model on the cpu-host profile whose fp32 peak is `peak`.
RunResult tiny_result_at_peak(double peak) {
  Config c;
  c.model = {2, 64, 4, 16, 128, 256, 0.0};
  c.model.kv_heads = 4;
  c.plan.micro_batch = 2, c.plan.global_batch = 8;
  c.plan.precision = Precision::fp32;
  c.machine = load_machine("cpu-host", default_machines_dir());
  c.machine.peak_tflops["fp32"] = peak;
  RunResult r = projected_result(c, project(c, nullptr), nullptr);
  r.mode = ResultMode::measured;
  r.iteration_s = {0.01, 0.01, 0.01};
  return r;
}

TEST(Plausibility, UtilizationAbovePeakIsAnError) {
  // The tiny model's ~10^8 FLOPs per 10 ms iteration, ~0.01 TFLOP/s: far above a peak of 10^-6, far below 10^6.
  const std::string why = utilization_above_peak(tiny_result_at_peak(1e-6));
  EXPECT_NE(why.find("MFU "), std::string::npos) << why;
  EXPECT_NE(why.find("machine 'cpu-host''s 1e-06 TFLOP/s fp32 peak"), std::string::npos) << why;
  EXPECT_NE(why.find("above 100%"), std::string::npos) << why;
  EXPECT_EQ(utilization_above_peak(tiny_result_at_peak(1e6)), "");
}

}  // namespace
}  // namespace ptdp
