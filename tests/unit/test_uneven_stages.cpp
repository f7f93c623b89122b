// Uneven pipeline stages (plan.layers_per_stage): the config refuses bad
// splits naming the field and round-trips good ones; chunk_layout places the
// layers by prefix sums; the memory model and the cost model follow each
// stage's own layer count.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/accounting/memory_model.h"
#include "core/config/chunk_layout.h"
#include "core/config/config.h"
#include "core/schedule/registry.h"
#include "core/sim/cost_model.h"
#include "core/sim/search.h"
#include "tests/config_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;

std::filesystem::path split_machines() { return std::filesystem::path(PTDP_SOURCE_DIR) / "sweeps" / "machines"; }

// 4 layers on 3 stages: only an uneven split fits.
json three_stages(const json& split) {
  json j = json::parse(R"({
    "model": {"layers": 4, "hidden": 64, "heads": 4, "seq_len": 16, "vocab": 128},
    "plan": {"tp": 1, "pp": 3, "dp": 1, "micro_batch": 1, "global_batch": 6, "precision": "fp32"},
    "machine": "cpu-host"})");
  if (!split.is_null()) j["plan"]["layers_per_stage"] = split;
  return j;
}

ConfigErrors split_problems(const json& j) {
  try {
    return validate(config_from_json(j, split_machines()), 3);
  } catch (const ConfigRefused& e) {
    return e.errors();
  }
}

bool split_names(const ConfigErrors& errors, const std::string& field, const std::string& word) {
  for (const auto& e : errors)
    if (e.field == field && e.message.find(word) != std::string::npos) return true;
  return false;
}

TEST(UnevenStages, AGoodSplitIsValidAndRoundTrips) {
  const Config c = config_from_json(three_stages(json{1, 2, 1}), split_machines());
  EXPECT_TRUE(validate(c, 3).empty()) << test::errors_text(validate(c, 3));
  EXPECT_EQ(c.plan.layers_per_stage, (std::vector<int>{1, 2, 1}));
  const json again = to_json(c);
  EXPECT_EQ(again["plan"]["layers_per_stage"], (json{1, 2, 1}));
  EXPECT_EQ(to_json(config_from_json(again, split_machines())), again);
  // Absent stays absent: results of even plans keep their old shape.
  Config even = c;
  even.plan.layers_per_stage.clear();
  EXPECT_FALSE(to_json(even)["plan"].contains("layers_per_stage"));
}

TEST(UnevenStages, BadSplitsAreRefusedNamingTheField) {
  EXPECT_TRUE(split_names(split_problems(three_stages(json{2, 2})), "plan.layers_per_stage", "one per virtual stage"));
  EXPECT_TRUE(split_names(split_problems(three_stages(json{0, 3, 1})), "plan.layers_per_stage", "must be positive"));
  EXPECT_TRUE(split_names(split_problems(three_stages(json{-1, 4, 1})), "plan.layers_per_stage", "must be positive"));
  EXPECT_TRUE(split_names(split_problems(three_stages(json{1, 2, 2})), "plan.layers_per_stage", "not model.layers=4"));
  EXPECT_TRUE(split_names(split_problems(three_stages(json{1, "2", 1})), "plan.layers_per_stage", "entry 1"));
  // Without a split, 4 layers do not divide over 3 stages.
  EXPECT_TRUE(split_names(split_problems(three_stages(json())), "plan.pp·plan.virtual_stages", "does not divide"));
}

TEST(UnevenStages, ChunkLayoutFollowsThePrefixSums) {
  Config c;
  c.model.layers = 12;
  c.plan.pp = 2, c.plan.virtual_stages = 2;
  c.plan.layers_per_stage = {2, 4, 4, 2};  // virtual stages 0..3: rank 0 holds 0 and 2, rank 1 holds 1 and 3
  const ChunkLayout first = chunk_layout(c.model, c.plan, 0, 0), second = chunk_layout(c.model, c.plan, 1, 0);
  const ChunkLayout third = chunk_layout(c.model, c.plan, 0, 1), last = chunk_layout(c.model, c.plan, 1, 1);
  EXPECT_EQ(first.first_layer, 0);
  EXPECT_EQ(first.num_layers, 2);
  EXPECT_EQ(second.first_layer, 2);
  EXPECT_EQ(second.num_layers, 4);
  EXPECT_EQ(third.first_layer, 6);
  EXPECT_EQ(third.num_layers, 4);
  EXPECT_EQ(last.first_layer, 10);
  EXPECT_EQ(last.num_layers, 2);
  EXPECT_TRUE(first.has_embedding && !first.has_head);
  EXPECT_TRUE(last.has_head && !last.has_embedding);
  EXPECT_FALSE(second.has_embedding || second.has_head || third.has_embedding || third.has_head);
}

// GPT-3-like layers on 4 stages: 6 each, or 5, 7, 7, 5.
Config four_stages(bool uneven) {
  Config c;
  c.model = {24, 2048, 16, 2048, 51200, 0};
  c.plan.pp = 4, c.plan.micro_batch = 1, c.plan.global_batch = 16;
  if (uneven) c.plan.layers_per_stage = {5, 7, 7, 5};
  c.machine = load_machine("a100-80gb", split_machines());
  return c;
}

TEST(UnevenStages, MemoryPerStageFollowsTheLayerCounts) {
  const Config even = four_stages(false), uneven = four_stages(true);
  const RankDims dims(even.model, even.plan);  // the layer split changes no size
  const std::int64_t per_layer = rank_parameter_count(even.model, even.plan, dims, 1) / 6;  // rank 1: layers only
  const int counts[] = {5, 7, 7, 5};
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(rank_parameter_count(uneven.model, uneven.plan, dims, r) - rank_parameter_count(even.model, even.plan, dims, r),
              (counts[r] - 6) * per_layer) << "rank " << r;
  const auto programs = build_pipeline("1f1b", 4, even.plan.micro_batches(), 1);
  const MemoryTraits tr = memory_traits(even.machine, even.plan);
  const auto a = activation_bytes(even.model, even.plan, dims, tr, ActivationFormula::ptdp);
  const auto e = memory_per_stage(even.model, even.plan, dims, tr, ActivationFormula::ptdp, programs);
  const auto u = memory_per_stage(uneven.model, uneven.plan, dims, tr, ActivationFormula::ptdp, programs);
  // Rank 1 keeps k micro-batches of 6 layers alive; uneven, k of 7.
  const std::int64_t k = (e[1].activations - a.recompute) / (6 * a.layer);
  ASSERT_GT(k, 0);
  EXPECT_EQ(u[1].activations - e[1].activations, k * a.layer);
  EXPECT_LT(u[0].activations, e[0].activations);
  EXPECT_LT(u[3].activations, e[3].activations);
}

TEST(UnevenStages, ForwardCostScalesWithTheStagesLayers) {
  const CostModel even(four_stages(false), nullptr), uneven(four_stages(true), nullptr);
  const double layer = even.forward(1, 0).total() / 6;  // rank 1: layers only
  EXPECT_NEAR(uneven.forward(1, 0).total(), 7 * layer, 1e-9 * layer);
  EXPECT_NEAR(uneven.forward(2, 0).total(), 7 * layer, 1e-9 * layer);
  EXPECT_NEAR(even.forward(0, 0).total() - uneven.forward(0, 0).total(), layer, 1e-9 * layer);
  EXPECT_NEAR(even.forward(3, 0).total() - uneven.forward(3, 0).total(), layer, 1e-9 * layer);
}

std::vector<std::vector<int>> searched_splits(const Config& base, bool uneven_ends, bool split_tp_pp) {
  SearchSpace space;
  space.micro_batches = {1};
  space.uneven_ends = uneven_ends, space.split_tp_pp = split_tp_pp;
  std::vector<std::vector<int>> out;
  for (const Candidate& c : search_plans(base, space, nullptr)) out.push_back(c.config.plan.layers_per_stage);
  return out;
}

TEST(UnevenStages, TheSearchProposesLighterEndsOnlyWhenAsked) {
  using Splits = std::vector<std::vector<int>>;
  EXPECT_EQ(searched_splits(four_stages(false), false, false), (Splits{{}}));
  Splits both = searched_splits(four_stages(false), true, false);
  std::sort(both.begin(), both.end());
  EXPECT_EQ(both, (Splits{{}, {5, 7, 7, 5}}));
  // A given split is kept for its own p·v and dropped for other t/p splits (t·p = 4: p of 1, 2, 4).
  Splits given = searched_splits(four_stages(true), false, true);
  std::sort(given.begin(), given.end());
  EXPECT_EQ(given, (Splits{{}, {}, {5, 7, 7, 5}}));
}

}  // namespace
}  // namespace ptdp
