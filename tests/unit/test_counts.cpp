// The paper's counts: parameters (eq. 2) and model FLOPs (eq. 3 and the
// no-recompute form) against Table 1 of Narayanan et al. (report/reference copy).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/accounting/flops.h"

namespace ptdp {
namespace {

nlohmann::json table1_rows() {
  std::ifstream in(std::string(PTDP_SOURCE_DIR) + "/report/reference/megatron-sc21.json");
  return nlohmann::json::parse(in)["experiments"]["table1_weak_scaling"]["rows"];
}

Model paper_model(const nlohmann::json& row) {
  Model m;
  m.layers = row["num_layers"];
  m.hidden = row["hidden_size"];
  m.heads = row["attention_heads"];
  m.seq_len = 2048;  // Section 5.1
  m.vocab = 51200;
  return m;
}

TEST(Counts, ParametersMatchEveryTable1Row) {
  const auto rows = table1_rows();
  ASSERT_EQ(rows.size(), 10u);
  for (const auto& row : rows) {
    const double billions = parameters_eq2(paper_model(row)) / 1e9;
    // Table 1 prints one decimal: agree to within half a unit of it.
    EXPECT_NEAR(billions, row["params_billion"].get<double>(), 0.05) << "l=" << row["num_layers"];
  }
}

TEST(Counts, TrillionParameterRowIs1008Billion) {
  Model m{128, 25600, 160, 2048, 51200, 0};
  EXPECT_NEAR(parameters_eq2(m) / 1e9, 1008.0, 0.05);
  EXPECT_EQ(parameter_count(m), static_cast<std::int64_t>(parameters_eq2(m)) + 2 * 25600);
}

TEST(Counts, Eq3MatchesHandEvaluationFor1Point7B) {
  const Model m{24, 2304, 24, 2048, 51200, 0};
  const double B = 512, s = 2048, l = 24, h = 2304, V = 51200;
  const double by_hand = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  EXPECT_NEAR(model_flops_eq3(m, B) / by_hand, 1.0, 1e-12);
  const double no_recompute = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(model_flops_no_recompute(m, B) / no_recompute, 1.0, 1e-12);
}

TEST(Counts, Eq3MatchesTheReferenceForEveryRow) {
  for (const auto& row : table1_rows()) {
    const double flops = model_flops_eq3(paper_model(row), row["batch_size"].get<double>());
    const double ref = row["derived"]["flops_per_iteration_eq3"].get<double>();
    EXPECT_NEAR(flops / ref, 1.0, 1e-5) << "l=" << row["num_layers"];  // reference keeps 6 digits
  }
}

TEST(Counts, PublishedThroughputImpliesSecondsPerIteration) {
  // X = F / (n·T): the reference's derived iteration times follow from eq. 3 and Table 1.
  for (const auto& row : table1_rows()) {
    const double flops = model_flops_eq3(paper_model(row), row["batch_size"].get<double>());
    const double t = flops / (row["num_gpus"].get<double>() * row["achieved_tflops_per_gpu"].get<double>() * 1e12);
    EXPECT_NEAR(t, row["derived"]["iteration_time_s_at_X"].get<double>(), 0.01) << "l=" << row["num_layers"];
  }
}

TEST(Counts, HardwareFlopsAddWhatRecomputeRuns) {
  const Model m{4, 64, 4, 16, 128, 0};
  const double B = 8;
  EXPECT_DOUBLE_EQ(hardware_flops(m, B, Recompute::none), model_flops_no_recompute(m, B));
  EXPECT_DOUBLE_EQ(hardware_flops(m, B, Recompute::full), model_flops_eq3(m, B));
  EXPECT_DOUBLE_EQ(hardware_flops(m, B, Recompute::selective) - hardware_flops(m, B, Recompute::none),
                   4 * 4 * B * 16 * 16 * 64);
  EXPECT_DOUBLE_EQ(model_flops(m, B, Recompute::full), model_flops_eq3(m, B));
  EXPECT_DOUBLE_EQ(model_flops(m, B, Recompute::selective), model_flops_no_recompute(m, B));
}

TEST(Counts, FfnSizeGeneralisesTheLayerFlops) {
  Model m{1, 64, 4, 16, 128, 128};  // f = 2h instead of 4h
  const double B = 2, s = 16, h = 64, f = 128;
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, B), 2 * B * s * (4 * h * h + 2 * h * f) + 4 * B * s * s * h);
}

}  // namespace
}  // namespace ptdp
