// The work bounds of a plan (core/sim/plan_limits.h): the instruction bound
// holds every schedule's programs, the memory-model bound every count the
// model makes, every shipped config and sweep point is within them, and the
// simulator keeps O(p) state for p stages.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/accounting/memory_model.h"
#include "core/schedule/registry.h"
#include "core/sim/pipeline_sim.h"
#include "core/sim/plan_limits.h"
#include "core/sweep/sweep.h"

namespace ptdp {
namespace {

TEST(PlanLimits, InstructionBoundHoldsEverySchedulesPrograms) {
  for (const std::string& schedule : schedule_names())
    for (int p : {1, 2, 4})
      for (int m : {4, 8})
        for (int v : {1, 2}) {
          if (v > 1 && (p == 1 || !find_schedule(schedule)->interleaved)) continue;
          std::int64_t n = 0;
          for (const auto& prog : build_pipeline(schedule, p, m, v)) n += static_cast<std::int64_t>(prog.size());
          EXPECT_LE(n, pipeline_instruction_bound(p, m, v)) << schedule << " p=" << p << " m=" << m << " v=" << v;
        }
  EXPECT_EQ(pipeline_instruction_bound(1 << 30, 1 << 30, 1 << 30), std::numeric_limits<std::int64_t>::max());
}

// Plans where each term of the bound dominates in turn (the parameters, the
// attention scores, the vocabulary, the MLP, many micro-batches alive), with
// one layer a chunk so that the bound sits close above the count: every
// recompute, both formulas and attention paths, both devices' element sizes.
TEST(PlanLimits, MemoryModelBoundIsAboveEveryCount) {
  const Config gpt3 = load_config(std::filesystem::path(PTDP_SOURCE_DIR) / "endtoend/configs/gpt3-175b-a100.json",
                                  default_machines_dir());
  std::vector<std::pair<Model, Plan>> plans;
  Plan one;  // t = p = d = v = 1, m = 1
  one.schedule = "gpipe";
  plans.push_back({gpt3.model, one});
  plans.push_back({{1, 64, 64, 4096, 128}, one});         // scores: a·s ≫ h
  plans.push_back({{1, 64, 4, 16, 1 << 20}, one});        // vocabulary
  plans.push_back({{1, 64, 4, 16, 128, 1 << 16}, one});   // MLP
  Plan many = one;
  many.global_batch = 64;                                   // gpipe keeps all 64 alive
  plans.push_back({{1, 64, 4, 16, 128}, many});
  for (auto [model, plan] : plans)
    for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full})
      for (ActivationFormula f : {ActivationFormula::ptdp, ActivationFormula::korthikanti})
        for (bool flash : {false, true})
          for (Device device : {Device::cpu, Device::cuda}) {
            plan.recompute = rc;
            model.dropout = 0.1;  // Korthikanti's masks
            const MemoryTraits tr = memory_traits(device, device == Device::cpu ? Precision::fp32 : Precision::bf16, flash);
            const Program program = build_program(plan.schedule, {1, plan.micro_batches(), 1, 0});
            const MemoryBreakdown counted = memory_model(model, plan, RankDims(model, plan), tr, f, 0, program);
            EXPECT_LE(static_cast<long double>(counted.total()), memory_model_bound(model, plan))
                << "layers " << model.layers << " hidden " << model.hidden << " recompute " << to_string(rc);
          }
}

TEST(PlanLimits, NamesEachBoundABigPlanBreaks) {
  Model m{2, 64, 4, 16, 128};
  Plan p;
  p.global_batch = 8;
  EXPECT_TRUE(check_work_limits(m, p).empty());
  m.vocab = 2147483647;
  m.hidden = 1 << 29;
  m.seq_len = 1000000000;
  p.global_batch = 1000000000;
  const ConfigErrors e = check_work_limits(m, p);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].field, "model.vocab");
  EXPECT_EQ(e[1].field, "model.hidden");
  EXPECT_EQ(e[2].field, "memory");
  EXPECT_EQ(e[3].field, "plan.pp·plan.virtual_stages·m");
}

TEST(PlanLimits, EveryShippedConfigAndSweepPointIsWithinThem) {
  const std::filesystem::path src(PTDP_SOURCE_DIR);
  for (const auto& e : std::filesystem::directory_iterator(src / "endtoend/configs")) {
    if (e.path().extension() != ".json") continue;  // README.md: the configs' sources
    const Config c = load_config(e.path(), default_machines_dir());
    EXPECT_TRUE(check_work_limits(c.model, c.plan).empty()) << e.path();
  }
  for (const char* dir : {"sweeps", "sweeps/modern"})  // the paper's sweeps and the modern set's
    for (const auto& e : std::filesystem::directory_iterator(src / dir)) {
      if (e.path().extension() != ".json") continue;
      for (const auto& p : load_sweep(e.path(), default_machines_dir(), nullptr).points) {
        const ConfigErrors beyond = check_work_limits(p.config.model, p.config.plan);
        EXPECT_TRUE(beyond.empty()) << e.path() << " point " << p.index << ": " << beyond.front().message;
      }
    }
}

// 50 000 stages: a table of channels for every pair of ranks would take 80 GB.
TEST(PlanLimits, SimulatorStateGrowsWithStagesNotTheirSquare) {
  const int p = 50000;
  const Timeline t = simulate_pipeline(build_pipeline("1f1b", p, 1, 1), zero_costs());
  // Every rank: F, B, reduce_grads, optimizer_step; a middle rank two receives and
  // two sends more, an end one of each and reduce_tied: 8p − 2 events.
  EXPECT_EQ(t.size(), static_cast<std::size_t>(p) * 8 - 2);
}

}  // namespace
}  // namespace ptdp
