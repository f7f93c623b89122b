// Timing iterations, and the measured result gathered from every rank.
#include "core/runtime/measured_run.h"

#include <algorithm>
#include <numeric>

#include "core/comm/host_gather.h"
#include "core/comm/placement.h"
#include "core/results/result_io.h"
#include "core/schedule/registry.h"
#include "core/sim/replay.h"
#include "core/tensor/allocator.h"

namespace ptdp {

namespace {

// Every rank's events of the last iteration, gathered to all ranks.
Timeline gather_timeline(Communicator& world, const Timeline& mine) {
  Timeline all;
  for (const auto& t : gather_host(world, pack_timeline(mine)))
    for (const auto& e : unpack_timeline(t)) all.push_back(e);
  return all;
}

// Per-stage means of per-world-rank values.
std::vector<double> stage_means(const Topology& topo, const std::vector<double>& per_rank) {
  std::vector<double> sum(static_cast<std::size_t>(topo.pp), 0.0), n(sum.size(), 0.0);
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    const auto s = static_cast<std::size_t>(topo.coord(static_cast<int>(r)).pp);
    sum[s] += per_rank[r], n[s] += 1;
  }
  for (std::size_t s = 0; s < sum.size(); ++s) sum[s] = n[s] > 0 ? sum[s] / n[s] : 0.0;
  return sum;
}

std::vector<std::int64_t> gather_bytes(Communicator& world, std::int64_t mine) {
  std::vector<std::int64_t> out;
  for (const double v : gather_host(world, static_cast<double>(mine))) out.push_back(static_cast<std::int64_t>(v));
  return out;
}

// The run's bubble: measured per rank, and the last iteration's measured
// instruction times replayed through the simulator (the first rank of each stage).
BubbleFigures bubble_figures(const Config& cfg, const std::vector<Program>& programs, const TrainSeries& s,
                             const Topology& topo) {
  BubbleFigures b;
  b.analytical = analytical_bubble(cfg.plan);
  if (s.seconds.empty()) return b;
  b.measured_per_rank = s.bubble;
  b.measured_per_stage = stage_means(topo, s.bubble);
  b.measured = mean(b.measured_per_stage);
  b.idle_share = mean(stage_means(topo, s.idle_share));
  const Plan& p = cfg.plan;
  const auto stage_of = [&topo](int rank) {
    const Coord c = topo.coord(rank);
    return c.tp == 0 && c.dp == 0 ? c.pp : -1;
  };
  const BubbleStats replayed = pipeline_bubble(simulate_pipeline(programs, costs_from_timeline(s.last_timeline, p.pp, stage_of)));
  b.simulated = replayed.mean_bubble;
  b.simulated_per_stage = replayed.bubble;
  return b;
}

MemoryFigures memory_figures(const Config& cfg, const std::vector<Program>& programs, const ProcessGroups& g,
                             const Backend& b, Communicator& world) {
  MemoryFigures m;
  m.formula = ActivationFormula::ptdp;
  const Plan& p = cfg.plan;
  const MemoryTraits traits = memory_traits(b.ops->device(), p.precision, p.attention == Attention::flash);
  m.model_per_stage = memory_per_stage(cfg.model, p, RankDims(cfg.model, p), traits, ActivationFormula::ptdp, programs);
  m.measured_per_rank = gather_bytes(world, b.allocator->stats().peak_bytes);
  m.measured_per_stage.assign(static_cast<std::size_t>(p.pp), 0);
  for (std::size_t r = 0; r < m.measured_per_rank.size(); ++r) {
    auto& stage = m.measured_per_stage[static_cast<std::size_t>(g.topology.coord(static_cast<int>(r)).pp)];
    stage = std::max(stage, m.measured_per_rank[r]);
  }
  m.peak_measured = *std::max_element(m.measured_per_rank.begin(), m.measured_per_rank.end());
  m.available = cfg.machine.memory_bytes - cfg.machine.memory_reserved_bytes;
  m.fits = fits(cfg.machine, m.peak_model());
  // The device's view (GPU): the pool's reserved and used peaks, cudaMemGetInfo at the tensor peak.
  const Backend::DeviceMemory d = b.device_memory();
  const std::pair<const char*, std::int64_t> device[] = {{"pool_reserved_peak", d.pool_reserved_peak},
                                                         {"pool_used_peak", d.pool_used_peak},
                                                         {"device_used_at_peak", d.device_used_at_peak}};
  for (const auto& [key, value] : device) {
    const auto per_rank = gather_bytes(world, value);
    if (per_rank.front() >= 0) m.device_per_rank[key] = per_rank;
  }
  return m;
}

CommunicationFigures communication_figures(const ProcessGroups& g, Communicator& world, int iterations) {
  const auto per_iteration = [&](const Communicator& c) {
    const auto all = gather_host(world, static_cast<double>(c.stats().bytes));
    return std::accumulate(all.begin(), all.end(), 0.0) / iterations;
  };
  return {per_iteration(*g.tp), per_iteration(*g.pp), per_iteration(*g.dp), per_iteration(*g.embedding)};
}

// Every rank's place and own figures (collective: the places and iteration
// times are gathered; compute and waits come from the gathered timelines).
std::vector<RankFigures> rank_figures(const TrainSeries& s, const ProcessPlace& here, Communicator& world) {
  const std::vector<RankPlace> places = gather_placement(world, here.host);
  const std::vector<std::vector<double>> times = gather_host(world, s.own_seconds);
  std::vector<RankFigures> out;
  for (std::size_t r = 0; r < places.size(); ++r)
    out.push_back({places[r].host, places[r].local_rank, places[r].node, times[r],
                   r < s.compute.size() ? s.compute[r] : 0.0, r < s.comm_wait.size() ? s.comm_wait[r] : 0.0});
  return out;
}

}  // namespace

TrainSeries run_iterations(Trainer& trainer, Communicator& world, int iterations, int warmup,
                           const IterationHooks& hooks, int first) {
  TrainSeries s;
  s.bubble.assign(static_cast<std::size_t>(world.size()), 0.0);
  s.idle_share = s.bubble;
  s.compute = s.comm_wait = s.bubble;
  const double timed = std::max(1, iterations - std::max(warmup, first));
  for (int it = first; it < iterations; ++it) {
    hooks.before(it);
    const IterationRecord rec = trainer.step(it);
    hooks.after(it, rec);
    s.loss.push_back(rec.loss);
    s.grad_norm.push_back(rec.grad_norm);
    s.lr.push_back(rec.lr);
    if (it < warmup) continue;
    s.seconds.push_back(rec.seconds);
    s.own_seconds.push_back(rec.own_seconds);
    s.last_timeline = gather_timeline(world, trainer.last_timeline());
    const BubbleStats b = pipeline_bubble(s.last_timeline);
    for (std::size_t r = 0; r < b.ranks.size(); ++r) {
      s.bubble[static_cast<std::size_t>(b.ranks[r])] += b.bubble[r] / timed;
      s.idle_share[static_cast<std::size_t>(b.ranks[r])] += b.idle_share[r] / timed;
    }
    for (const auto& [rank, t] : time_split(s.last_timeline)) {
      s.compute[static_cast<std::size_t>(rank)] += t.compute_s / timed;
      s.comm_wait[static_cast<std::size_t>(rank)] += t.comm_wait_s / timed;
    }
  }
  return s;
}

RunResult measured_result(const Config& cfg, const TrainSeries& series, const ProcessGroups& groups,
                          const Backend& backend, Communicator& world, nlohmann::json provenance) {
  RunResult r;
  r.mode = ResultMode::measured;
  r.config = cfg;
  r.vocab_padded = cfg.model.padded_vocab();
  r.software = software_info();
  for (const auto& [key, value] : backend.info.items())
    if (key == "driver" || key == "cuda_runtime" || key == "cublaslt" || key == "nccl") r.software[key] = value;
  r.provenance = std::move(provenance);
  r.iteration_s = series.seconds;
  r.loss = series.loss;
  r.grad_norm = series.grad_norm;
  r.lr = series.lr;
  const Plan& p = cfg.plan;  // every stage's instruction list, for the memory model and the replay
  const auto programs = build_pipeline(p.schedule, p.pp, p.micro_batches(), p.virtual_stages);
  r.memory = memory_figures(cfg, programs, groups, backend, world);
  r.communication = communication_figures(groups, world, static_cast<int>(series.loss.size()));
  r.ranks = rank_figures(series, backend.place, world);
  if (world.rank() != 0) return r;  // the gathers above are collective; the rest is rank 0's
  r.bubble = bubble_figures(cfg, programs, series, groups.topology);
  return r;
}

}  // namespace ptdp
