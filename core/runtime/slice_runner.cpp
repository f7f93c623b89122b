// measure_slice: one stage's program over stand-in groups; project_slice: the
// measured compute in the simulator; slice_result: the result JSON.
#include "core/runtime/slice_runner.h"

#include <algorithm>
#include <map>

#include "core/comm/shape_only_communicator.h"
#include "core/data/token_source.h"
#include "core/results/result.h"
#include "core/results/result_io.h"
#include "core/runtime/backend.h"
#include "core/runtime/trainer.h"
#include "core/schedule/registry.h"
#include "core/sim/cost_model.h"
#ifdef PTDP_HAVE_NCCL
#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/cuda_ops.h"
#endif

namespace ptdp {

namespace {

// How a received pipeline tensor is zeroed: memset on the host, an
// asynchronous memset on the CUDA backend's stream (ordered with its kernels).
ShapeOnlyCommunicator::Clear receive_clear(Ops& ops) {
  if (ops.device() == Device::cpu) return nullptr;  // the stand-in's own host memset
#ifdef PTDP_HAVE_NCCL
  if (auto* cuda = dynamic_cast<CudaOps*>(&ops)) {
    cudaStream_t stream = cuda->stream();
    return [stream](void* buf, std::size_t bytes) { PTDP_CUDA_CHECK(cudaMemsetAsync(buf, 0, bytes, stream)); };
  }
#endif
  return nullptr;  // another device: received buffers keep what they held
}

// The groups of rank (tp 0, dp 0, pp `stage`), every one a stand-in.
struct StandInGroups {
  std::unique_ptr<Communicator> world;
  ProcessGroups groups;
};

StandInGroups stand_in_groups(const Config& cfg, int stage, Device device, const ShapeOnlyCommunicator::Clear& clear) {
  const Plan& p = cfg.plan;
  const auto group = [&](int rank, int size) { return std::make_unique<ShapeOnlyCommunicator>(rank, size, device, clear); };
  StandInGroups s;
  ProcessGroups& g = s.groups;
  g.topology = {p.tp, p.pp, p.dp, cfg.machine.gpus_per_node};
  g.coord = {0, 0, stage};
  g.world_rank = g.topology.rank_of(g.coord);
  s.world = group(g.world_rank, g.topology.world());
  g.world = s.world.get();
  g.tp = group(0, p.tp);
  g.dp = group(0, p.dp);
  g.pp = group(stage, p.pp);
  g.model_parallel = group(stage * p.tp, p.tp * p.pp);
  const bool ends = p.pp > 1 && (g.first_stage() || g.last_stage());
  g.embedding = ends ? group(g.first_stage() ? 0 : 1, 2) : group(0, 1);
  return s;
}

// The mean duration of the stage's forwards and backwards per chunk, and of
// its optimizer step, over the events of every timed iteration. Means, not
// medians: replayed, they add up to the stage's measured busy time even where
// the device is shared and some instructions are slowed down.
void per_chunk_costs(const Timeline& events, int v, SliceMeasurement& m) {
  std::map<std::pair<int, int>, std::vector<double>> spans;  // (op, chunk) -> durations
  for (const auto& e : events)
    if (e.is_instruction() && (is_compute(e.instr.op) || e.instr.op == Op::optimizer_step))
      spans[{static_cast<int>(e.instr.op), is_compute(e.instr.op) ? e.instr.chunk : -1}].push_back(e.end_s - e.start_s);
  const auto of = [&](Op op, int c) {
    auto it = spans.find({static_cast<int>(op), c});
    return it == spans.end() ? 0.0 : mean(it->second);
  };
  for (int c = 0; c < v; ++c) {
    m.forward_s.push_back(of(Op::forward, c));
    // A zero-bubble list runs each backward as B then W: their sum is the whole one.
    m.backward_s.push_back(of(Op::backward, c) + of(Op::backward_input, c) + of(Op::backward_weight, c));
  }
  m.optimizer_s = of(Op::optimizer_step, -1);
}

double ratio(double num, double den) { return den > 0 ? num / den : 1.0; }

}  // namespace

int heaviest_stage(const Config& cfg, const Calibration* calibration) {
  const CostModel costs(cfg, calibration);
  int best = 0;
  double best_s = -1;
  for (int r = 0; r < cfg.plan.pp; ++r) {
    double s = 0;
    for (int c = 0; c < cfg.plan.virtual_stages; ++c) s += costs.forward(r, c).total() + costs.backward(r, c).total();
    if (s > best_s) best = r, best_s = s;
  }
  return best;
}

SliceMeasurement measure_slice(const Config& cfg, const SliceOptions& options) {
  std::unique_ptr<Allocator> alloc = options.device == Device::cpu && options.cpu_memory_limit > 0
                                         ? std::make_unique<CpuAllocator>(0, options.cpu_memory_limit)
                                         : make_allocator(options.device, 0);
  std::unique_ptr<Ops> ops = make_ops(options.device, cfg, *alloc);
  StandInGroups s = stand_in_groups(cfg, options.stage, ops->device(), receive_clear(*ops));
  const auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  Trainer trainer(cfg, *ops, s.groups, *data);
  std::vector<double> timed;
  Timeline events;  // of every timed iteration
  for (int i = 0; i < options.iterations; ++i) {
    const IterationRecord rec = trainer.step(i);
    if (i < options.warmup) continue;
    timed.push_back(rec.seconds);
    events.insert(events.end(), trainer.last_timeline().begin(), trainer.last_timeline().end());
  }
  SliceMeasurement m;
  m.stage = options.stage;
  m.timeline = trainer.last_timeline();
  m.iteration_s = mean(timed);
  m.peak_bytes = alloc->stats().peak_bytes;
  m.backend = {{"device", device_name(options.device)}, {"backend", ops->name()}};
  per_chunk_costs(events, cfg.plan.virtual_stages, m);
  return m;
}

SliceProjection project_slice(const Config& cfg, const SliceMeasurement& m, const Calibration* calibration) {
  const int k = m.stage;
  auto model = std::make_shared<const CostModel>(cfg, calibration);
  const auto measured_pass = [model, &m, k](int rank, const Instr& in) {
    const bool fwd = in.op == Op::forward;
    const PassCost& here = model->pass(rank, in);  // F, the whole backward, or its B or W share
    const PassCost& there = fwd ? model->forward(k, in.chunk) : model->backward(k, in.chunk);
    const double measured = (fwd ? m.forward_s : m.backward_s)[static_cast<std::size_t>(in.chunk)];
    PassCost c;
    c.gemm = measured * ratio(here.compute(), there.compute());  // all of the measured compute, unsplit
    c.tp_comm = here.tp_comm;
    return c;
  };
  PipelineCosts costs = model->pipeline_costs();
  const PipelineCosts modelled = costs;
  costs.duration = [modelled, measured_pass, model, &m, k](int rank, const Instr& in) {
    if (is_compute(in.op)) return measured_pass(rank, in).total();
    if (in.op == Op::optimizer_step) return m.optimizer_s * ratio(model->optimizer(rank), model->optimizer(k));
    return modelled.duration(rank, in);
  };
  SliceProjection sp;
  sp.projection = project_with(cfg, costs, measured_pass, ActivationFormula::ptdp);  // the slice ran ptdp's tensors
  const auto& mem = sp.projection.memory;
  const std::int64_t measured_model = mem[static_cast<std::size_t>(k)].total();
  for (const auto& r : mem) {
    sp.rank_bytes.push_back(std::max<std::int64_t>(0, m.peak_bytes + r.total() - measured_model));
    sp.rank_fits.push_back(fits(cfg.machine, sp.rank_bytes.back()));
  }
  sp.projection.fits = std::all_of(sp.rank_fits.begin(), sp.rank_fits.end(), [](bool f) { return f; });
  return sp;
}

RunResult slice_result(const Config& cfg, const SliceOptions& options, const SliceMeasurement& m,
                       const SliceProjection& sp, const Calibration* calibration) {
  RunResult r = projected_result(cfg, sp.projection, calibration);
  r.mode = ResultMode::slice;
  r.provenance["costs"] = "forward, backward and optimizer of the measured stage (scaled to the other stages by "
                          "the model's ratio); communication from the model";
  const std::int64_t peak = *std::max_element(sp.rank_bytes.begin(), sp.rank_bytes.end());
  r.memory.peak_measured = m.peak_bytes;
  r.memory.fits = sp.projection.fits;
  r.extra["slice"] = {{"stage", m.stage},
                      {"device", device_name(options.device)},
                      {"backend", m.backend},
                      {"iterations", options.iterations},
                      {"warmup", options.warmup},
                      {"measured_iteration_s", m.iteration_s},
                      {"forward_s_per_chunk", m.forward_s},
                      {"backward_s_per_chunk", m.backward_s},
                      {"optimizer_s", m.optimizer_s},
                      {"peak_measured_bytes", m.peak_bytes},
                      {"peak_slice_bytes", peak},
                      {"rank_bytes", sp.rank_bytes},
                      {"rank_fits", sp.rank_fits}};
  if (!sp.projection.fits) {
    nlohmann::json ranks = nlohmann::json::array();
    for (std::size_t i = 0; i < sp.rank_fits.size(); ++i)
      if (!sp.rank_fits[i]) ranks.push_back(static_cast<int>(i));
    r.extra["does_not_fit"] = {{"peak_bytes", peak}, {"available_bytes", r.memory.available}, {"pipeline_ranks", ranks}};
  }
  return r;
}

RunResult slice_out_of_memory_result(const Config& cfg, const SliceOptions& options, const std::string& why,
                                     const Calibration* calibration) {
  Projection proj = project(cfg, calibration, ActivationFormula::ptdp);
  proj.fits = false;
  RunResult r = projected_result(cfg, proj, calibration);
  r.mode = ResultMode::slice;
  r.provenance["costs"] = "analytical model only: the measured stage ran out of memory on this device";
  r.extra["slice"] = {{"stage", options.stage}, {"device", device_name(options.device)}, {"out_of_memory", why}};
  r.extra["does_not_fit"] = {{"peak_bytes", nullptr}, {"available_bytes", r.memory.available},
                             {"pipeline_ranks", {options.stage}}, {"out_of_memory", why}};
  return r;
}

}  // namespace ptdp
