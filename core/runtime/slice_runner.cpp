// measure_slice: one stage's program over stand-in groups, its costs per chunk.
#include "core/runtime/slice_runner.h"

#include <map>

#include "core/comm/shape_only_communicator.h"
#include "core/data/token_source.h"
#include "core/results/result_io.h"
#include "core/runtime/backend.h"
#include "core/runtime/trainer.h"
#include "core/schedule/registry.h"
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

}  // namespace

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

}  // namespace ptdp
