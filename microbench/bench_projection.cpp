// How fast the simulator projects: the 1T-parameter row of Table 1 (3072 GPUs,
// p = 64, interleaved) and every paper experiment together (ptdp validate's work).
// Targets (issue: projection speed): under 100 ms and under 5 s on one core.
#include <benchmark/benchmark.h>

#include "core/config/data_root.h"
#include "core/sim/projector.h"
#include "core/sweep/paper_check.h"

namespace {

ptdp::Config trillion() {
  ptdp::Config c;
  c.model = {128, 25600, 160, 2048, 51200, 0, 0.1};
  c.plan.tp = 8, c.plan.pp = 64, c.plan.dp = 6, c.plan.virtual_stages = 2;
  c.plan.micro_batch = 1, c.plan.global_batch = 3072, c.plan.schedule = "interleaved";
  c.plan.recompute = ptdp::Recompute::full, c.plan.scatter_gather = true, c.plan.precision = ptdp::Precision::fp16;
  c.machine = ptdp::load_machine("a100-80gb", ptdp::default_machines_dir());
  return c;
}

void BM_Project1T(benchmark::State& state) {
  const ptdp::Config c = trillion();
  for (auto _ : state) benchmark::DoNotOptimize(ptdp::project(c, nullptr).iteration_s);
  state.counters["instructions"] = static_cast<double>(ptdp::project(c, nullptr).timeline.size());
}
BENCHMARK(BM_Project1T)->Unit(benchmark::kMillisecond);

void BM_AllPaperExperiments(benchmark::State& state) {
  const nlohmann::json reference = ptdp::load_reference_experiments();
  std::vector<ptdp::Sweep> sweeps;
  for (const auto& e : std::filesystem::directory_iterator(ptdp::data_root() / "sweeps"))
    if (e.path().extension() == ".json") {
      auto s = ptdp::load_sweep(e.path(), ptdp::default_machines_dir(), &reference);
      if (!s.reference.empty() && s.mode != ptdp::SweepMode::measure) sweeps.push_back(std::move(s));
    }
  for (auto _ : state)
    for (const auto& s : sweeps) benchmark::DoNotOptimize(ptdp::check_against_paper(s, nullptr).mean_abs_error);
  state.counters["experiments"] = static_cast<double>(sweeps.size());
}
BENCHMARK(BM_AllPaperExperiments)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
