// Training run and its measured result: per-iteration progress on rank 0,
// then figures gathered from every rank into one result JSON.
#include "endtoend/train_run.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <new>
#include <thread>

#include "core/accounting/flops.h"
#include "core/accounting/throughput.h"
#include "core/checkpoint/hf_gpt2_export.h"
#include "core/comm/process_groups.h"
#include "core/data/token_source.h"
#include "core/results/output_files.h"
#include "core/results/plausibility.h"
#include "core/runtime/measured_run.h"
#include "core/sim/projector.h"
#include "core/tensor/allocator.h"
#include "endtoend/commands.h"
#include "endtoend/train_checkpoint.h"

namespace ptdp::cli {

namespace {

std::unique_ptr<TokenSource> make_data(const Config& cfg, const TrainArgs& args) {
  if (args.data.empty()) return make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  return make_text_source(args.data, cfg.model.seq_len, cfg.plan.seed);
}

void inject(const std::optional<Fault>& fault, int rank, int iteration) {
  if (!fault || fault->rank != rank || fault->iteration != iteration || fault->kind == Fault::Kind::nan ||
      fault->kind == Fault::Kind::slow)
    return;
  std::fprintf(stderr, "ptdp train: rank %d: injected fault (%s) at iteration %d\n", rank, fault_kind_name(fault->kind),
               iteration);
  std::fflush(stderr);
  if (fault->kind == Fault::Kind::kill) std::raise(SIGKILL);
  if (fault->kind == Fault::Kind::oom) throw OutOfMemory("rank " + std::to_string(rank) + ": injected out of memory");
  if (fault->kind == Fault::Kind::alloc) throw std::bad_alloc();
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// A loss that is no longer finite: every rank sees the same all-reduced loss,
// so every rank throws after the same iteration and none waits on another.
struct Diverged : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Rank 0's line per iteration; the faults a test asked for; the end of a run
// whose loss became NaN or infinite (its figures would mean nothing).
IterationHooks hooks(const Config& cfg, const TrainArgs& args, int rank, const std::optional<Fault>& fault) {
  IterationHooks h;
  h.before = [fault, rank](int it) { inject(fault, rank, it); };
  h.after = [&cfg, &args, rank, fault](int it, const IterationRecord& record) {
    IterationRecord rec = record;
    if (fault && fault->kind == Fault::Kind::nan && fault->iteration == it) rec.loss = std::nan("");
    if (rank == 0) {
      const Throughput t = throughput(cfg, rec.seconds);
      std::printf("iter %4d/%d  loss %.4f  %.3f s  %.4f TFLOP/s per device  MFU %.1f%%  HFU %.1f%%%s\n", it + 1,
                  args.iterations, rec.loss, rec.seconds, t.model_tflops_per_gpu, 100 * t.mfu.value_or(0),
                  100 * t.hfu.value_or(0), it < args.warmup ? "  (warm-up)" : "");
    }
    std::fflush(stdout);
    if (!std::isfinite(rec.loss))
      throw Diverged("the loss is " + std::to_string(rec.loss) + " after iteration " + std::to_string(it + 1) +
                     ": training diverged (a lower optimizer.lr, or bf16 instead of fp16, may help); no result is written");
  };
  return h;
}

void print_summary(const RunResult& r, const std::string& out) {
  const Config& cfg = r.config;
  const Throughput t = r.throughput();
  const double peak = t.peak_tflops.value_or(0);
  const double mfu = 100 * t.mfu.value_or(0), hfu = 100 * t.hfu.value_or(0);
  std::printf("ptdp train: median %.4f s/iteration, %.4f model TFLOP/s per device, MFU %.1f%%, HFU %.1f%% "
              "(of %.4g TFLOP/s %s peak), bubble %.3f (replayed %.3f, analytical %.3f), peak memory %.1f MiB "
              "(model %.1f MiB)%s%s\n",
              r.median_iteration_s(), t.model_tflops_per_gpu, mfu, hfu, peak,
              to_string(cfg.plan.precision).c_str(), r.bubble.measured.value_or(0), r.bubble.simulated.value_or(0),
              r.bubble.analytical, static_cast<double>(r.memory.peak_measured.value_or(0)) / (1 << 20),
              static_cast<double>(r.memory.peak_model()) / (1 << 20), out.empty() ? "" : ", result in ", out.c_str());
  // MFU or HFU above 100%: the peak is below what this machine did (hardware.errors).
  if (r.hardware)
    for (const std::string& e : r.hardware->errors) std::fprintf(stderr, "ptdp train: error: %s\n", e.c_str());
  if (r.projected)
    std::printf("ptdp train: projected on %s: %.4f s/iteration, bubble %.3f, model memory %.1f MiB\n",
                cfg.machine.name.c_str(), r.projected->median_iteration_s(), r.projected->bubble.simulated.value_or(0),
                static_cast<double>(r.projected->memory.peak_model()) / (1 << 20));
}

// Several ranks: the slowest rank (and node, with several hosts) against the median.
void print_stragglers(const RunResult& r) {
  const auto s = straggler_summary(r.ranks);
  if (r.ranks.size() < 2 || !s) return;
  for (const std::string& line : describe(*s, r.hardware ? r.hardware->hosts : 1))
    std::printf("ptdp train: %s\n", line.c_str());
}

// The trace's track of each rank: "rank 3 (t1 d1 p0) @ host-a".
std::vector<std::string> track_names(const RunResult& r, const ProcessGroups& groups) {
  std::vector<std::string> names;
  for (std::size_t rank = 0; rank < r.ranks.size(); ++rank) {
    const Coord c = groups.topology.coord(static_cast<int>(rank));
    names.push_back("rank " + std::to_string(rank) + " (t" + std::to_string(c.tp) + " d" + std::to_string(c.dp) +
                    " p" + std::to_string(c.pp) + ") @ " + r.ranks[rank].host);
  }
  return names;
}

// The trained weights gathered from every rank (collective over `world`), and
// on rank 0 the Hugging Face folder staged with the run's other outputs.
void stage_hf_export(OutputFiles& files, const Config& cfg, const TrainArgs& args, Trainer& trainer, Ops& ops,
                     const ProcessGroups& groups, Communicator& world, const TokenSource& data) {
  const std::vector<ParamShape> names = ptdp_param_shapes(hf_gpt2_layout(cfg.model, cfg.model.seq_len));
  const FullParams full = gather_full_params(trainer.model(), ops, world, groups.coord.dp, names);
  if (world.rank() != 0) return;
  stage_hf_gpt2_export(files, args.export_hf, full, cfg.model, fixed_batch(data, kHfCheckBatch, cfg.model.seq_len));
}

void print_hf_export(const TrainArgs& args) {
  if (!args.export_hf.empty())
    std::printf("ptdp train: Hugging Face GPT-2 (config.json, model.safetensors, %s) written to %s\n", kHfCheckFile,
                args.export_hf.c_str());
}

// --iterations 0: no step runs; the weights as initialised (or as --init-hf
// gave them) saved as step 0 and exported. No result: nothing was measured.
int write_initial_weights(const Config& cfg, const TrainArgs& args, Trainer& trainer, Ops& ops,
                          const ProcessGroups& groups, Communicator& world, const TokenSource& data,
                          CheckpointRun& checkpoints) {
  checkpoints.save_initial();
  OutputFiles files;
  if (!args.export_hf.empty()) stage_hf_export(files, cfg, args, trainer, ops, groups, world, data);
  if (world.rank() != 0) return kExitOk;
  files.commit();
  std::printf("ptdp train: --iterations 0: no step run, the initial weights written\n");
  print_hf_export(args);
  return kExitOk;
}

}  // namespace

std::optional<Fault> fault_of(const TrainArgs& args, int ranks) {
  if (args.fault.empty()) return std::nullopt;
  return parse_fault(args.fault, ranks, args.iterations);
}

int train_and_report(const Config& cfg, const TrainArgs& args, Communicator& world, const ProcessPlace& here,
                     const std::string& mpi_version, const Hardware& hardware, const FullParams* initial) {
  const bool root = world.rank() == 0;
  Backend backend = make_backend(args.device, cfg, world, here, args.comm_timeout_s);
  Ops& ops = *backend.ops;
  Communicator& device_world = backend.device_world ? *backend.device_world : world;
  ProcessGroups groups =
      make_process_groups(device_world, {cfg.plan.tp, cfg.plan.pp, cfg.plan.dp, cfg.machine.gpus_per_node},
                          cfg.plan.tp_comm_overlap);
  auto data = make_data(cfg, args);
  InitialWeights start;
  if (initial != nullptr) start = [&](RankModel& model) { load_full_params(model, ops, *initial); };
  Trainer trainer(cfg, ops, groups, *data, start);
  const std::optional<Fault> fault = fault_of(args, world.size());
  if (fault && fault->kind == Fault::Kind::slow && fault->rank == world.rank())
    trainer.set_compute_slowdown(fault->factor);
  if (root)
    std::printf("ptdp train: %lld parameters, t=%d p=%d d=%d v=%d, %s, m=%d, %d rank%s, %s, data: %s\n",
                static_cast<long long>(parameter_count(cfg.model)), cfg.plan.tp, cfg.plan.pp, cfg.plan.dp,
                cfg.plan.virtual_stages, cfg.plan.schedule.c_str(), cfg.plan.micro_batches(), world.size(),
                world.size() == 1 ? "" : "s", ops.name().c_str(), data->describe().c_str());
  CheckpointRun checkpoints(args, trainer, world, data->describe());
  const int first = checkpoints.load();
  if (args.iterations == 0) return write_initial_weights(cfg, args, trainer, ops, groups, world, *data, checkpoints);
  IterationHooks h = hooks(cfg, args, world.rank(), fault);
  h.after = [&checkpoints, report = h.after](int it, const IterationRecord& rec) {
    report(it, rec);
    checkpoints.after_iteration(it);
  };
  TrainSeries s;
  try {
    s = run_iterations(trainer, world, args.iterations, args.warmup, h, first);
  } catch (const Diverged& e) {
    if (root) std::fprintf(stderr, "ptdp train: %s\n", e.what());
    return kExitFailed;
  }
  const nlohmann::json run = {{"device", device_name(args.device)}, {"ranks", world.size()},
                              {"iterations", args.iterations},      {"warmup", args.warmup},
                              {"data", data->describe()},           {"backend", ops.name()},
                              {"hardware", backend.info},           {"first_iteration", first},
                              {"loaded", args.load.empty() ? nlohmann::json(nullptr) : nlohmann::json(args.load)}};
  RunResult result = measured_result(cfg, s, groups, backend, world, run);
  if (root) attach_projection(cfg, nullptr, result);
  result.hardware = hardware;
  if (std::string why = utilization_above_peak(result); !why.empty()) result.hardware->errors.push_back(std::move(why));
  result.checkpoint = checkpoints.figures();
  if (result.checkpoint && result.checkpoint->every)
    set_checkpoint_interval(*result.checkpoint, *result.checkpoint->every, result.median_iteration_s());
  OutputFiles files;  // the trace, the result and the export together, or none
  if (!args.export_hf.empty()) stage_hf_export(files, cfg, args, trainer, ops, groups, world, *data);
  if (!root) return kExitOk;
  result.software["mpi"] = mpi_version;
  if (!args.trace.empty()) {
    result.extra["timeline"] = args.trace;
    files.add(args.trace, chrome_trace(s.last_timeline, "ptdp train (last iteration)", track_names(result, groups)), -1);
  }
  if (!args.out.empty()) files.add(args.out, to_json(result));
  files.commit();
  print_summary(result, args.out);
  print_stragglers(result);
  print_hf_export(args);
  return kExitOk;
}

}  // namespace ptdp::cli
