// Training run and its measured result: per-iteration progress on rank 0,
// then figures gathered from every rank into one result JSON.
#include "endtoend/train_run.h"

#include <csignal>
#include <cstdio>
#include <numeric>
#include <thread>

#include "core/comm/host_gather.h"
#include "core/comm/process_groups.h"
#include "core/data/token_source.h"
#include "core/metrics/flops.h"
#include "core/metrics/result.h"
#include "core/metrics/result_io.h"
#include "core/runtime/trainer.h"
#include "core/runtime/backend.h"
#include "core/tensor/allocator.h"
#include "endtoend/commands.h"

namespace ptdp::cli {

namespace {

struct Series {
  std::vector<double> seconds, loss, grad_norm;
  std::vector<double> bubble, idle_share;  // per rank, summed over timed iterations
  Timeline last_timeline;                  // all ranks, last iteration
};

std::unique_ptr<TokenSource> make_data(const Config& cfg, const TrainArgs& args) {
  if (args.data.empty()) return make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  return make_text_source(args.data, cfg.model.seq_len, cfg.plan.seed);
}

void inject(const std::optional<Fault>& fault, int rank, int iteration) {
  if (!fault || fault->rank != rank || fault->iteration != iteration) return;
  std::fprintf(stderr, "ptdp train: rank %d: injected fault (%s) at iteration %d\n", rank,
               fault->kind == Fault::Kind::kill ? "kill" : fault->kind == Fault::Kind::oom ? "oom" : "hang", iteration);
  std::fflush(stderr);
  if (fault->kind == Fault::Kind::kill) std::raise(SIGKILL);
  if (fault->kind == Fault::Kind::oom) throw OutOfMemory("rank " + std::to_string(rank) + ": injected out of memory");
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// Every rank's events of the last iteration, gathered to all ranks.
Timeline gather_timeline(Communicator& world, const Timeline& mine) {
  Timeline all;
  for (const auto& t : gather_host(world, pack_timeline(mine)))
    for (const auto& e : unpack_timeline(t)) all.push_back(e);
  return all;
}

Series train(const Config& cfg, const TrainArgs& args, Trainer& trainer, Communicator& world) {
  Series s;
  const bool root = world.rank() == 0;
  const auto fault = parse_fault(args.fault);
  const double flops = model_flops(cfg.model, cfg.plan.global_batch, cfg.plan.recompute);
  const double peak = cfg.machine.peak_for(to_string(cfg.plan.precision));
  s.bubble.assign(static_cast<std::size_t>(world.size()), 0.0);
  s.idle_share = s.bubble;
  for (int it = 0; it < args.iterations; ++it) {
    inject(fault, world.rank(), it);
    const IterationRecord rec = trainer.step(it);
    if (root) {
      const Utilization u = utilization(cfg.model, cfg.plan, rec.seconds, peak);
      std::printf("iter %4d/%d  loss %.4f  %.3f s  %.4f TFLOP/s per device  MFU %.1f%%  HFU %.1f%%%s\n", it + 1,
                  args.iterations, rec.loss, rec.seconds, flops / (cfg.plan.world_size() * rec.seconds) / 1e12,
                  100 * u.mfu, 100 * u.hfu, it < args.warmup ? "  (warm-up)" : "");
    }
    std::fflush(stdout);
    s.loss.push_back(rec.loss);
    s.grad_norm.push_back(rec.grad_norm);
    if (it < args.warmup) continue;
    s.seconds.push_back(rec.seconds);
    s.last_timeline = gather_timeline(world, trainer.last_timeline());
    const BubbleStats b = pipeline_bubble(s.last_timeline);
    for (std::size_t r = 0; r < b.ranks.size(); ++r) {
      s.bubble[static_cast<std::size_t>(b.ranks[r])] += b.bubble[r] / static_cast<double>(args.iterations - args.warmup);
      s.idle_share[static_cast<std::size_t>(b.ranks[r])] += b.idle_share[r] / static_cast<double>(args.iterations - args.warmup);
    }
  }
  return s;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

nlohmann::json memory_json(const Config& cfg, Trainer& trainer, const ProcessGroups& g, const Backend& b,
                           Communicator& host) {
  const MemoryTraits traits =
      memory_traits(b.ops->device(), cfg.plan.precision, cfg.plan.attention == Attention::flash);
  const MemoryBreakdown model = memory_model(cfg.model, cfg.plan, traits, g.coord.pp, trainer.program());
  const auto peaks = gather_host(host, static_cast<double>(b.allocator->stats().peak_bytes));
  const auto totals = gather_host(host, static_cast<double>(model.total()));
  nlohmann::json j = {{"peak_measured", *std::max_element(peaks.begin(), peaks.end())},
                      {"peak_measured_per_rank", peaks},
                      {"model", to_json(model)},  // rank 0's breakdown
                      {"model_total_per_rank", totals}};
  // The device's view (GPU): the pool's reserved and used peaks, cudaMemGetInfo at the tensor peak.
  const Backend::DeviceMemory d = b.device_memory();
  const std::pair<const char*, std::int64_t> device[] = {{"pool_reserved_peak_per_rank", d.pool_reserved_peak},
                                                         {"pool_used_peak_per_rank", d.pool_used_peak},
                                                         {"device_used_at_peak_per_rank", d.device_used_at_peak}};
  for (const auto& [key, value] : device) {
    const auto per_rank = gather_host(host, static_cast<double>(value));
    if (per_rank.front() >= 0) j[key] = per_rank;
  }
  return j;
}

nlohmann::json communication_json(const ProcessGroups& g, Communicator& host, int iterations) {
  const auto per_iteration = [&](const Communicator& c) {
    const auto all = gather_host(host, static_cast<double>(c.stats().bytes));
    return std::accumulate(all.begin(), all.end(), 0.0) / iterations;
  };
  return {{"tp_bytes", per_iteration(*g.tp)},
          {"pp_bytes", per_iteration(*g.pp)},
          {"dp_bytes", per_iteration(*g.dp)},
          {"embedding_bytes", per_iteration(*g.embedding)},
          {"note", "payload bytes per iteration, summed over ranks"}};
}

nlohmann::json metrics_json(const Config& cfg, const Series& s) {
  nlohmann::json m = throughput_metrics(cfg, median(s.seconds));
  m["iteration_s"] = summarize_samples(s.seconds);
  m["bubble"] = {{"measured", mean(s.bubble)},
                 {"measured_per_rank", s.bubble},
                 {"measured_idle_share", mean(s.idle_share)},
                 {"analytical", analytical_bubble(cfg.plan)},
                 {"simulated", nullptr},
                 {"definition", "idle/busy within the pipeline phase (first instruction to last backward over all "
                                "ranks), the paper's t_pb/t_id; idle_share = idle/phase"}};
  m["loss"] = s.loss;
  m["grad_norm"] = s.grad_norm;
  return m;
}

}  // namespace

std::optional<Fault> parse_fault(const std::string& text) {
  Fault f;
  char kind[8] = "";
  char tail = 0;
  if (std::sscanf(text.c_str(), "%7[a-z]:%d:%d%c", kind, &f.rank, &f.iteration, &tail) != 3) return std::nullopt;
  const std::string k = kind;
  if (k == "kill") f.kind = Fault::Kind::kill;
  else if (k == "oom") f.kind = Fault::Kind::oom;
  else if (k != "hang") return std::nullopt;
  return f;
}

int train_and_report(const Config& cfg, const TrainArgs& args, Communicator& world, const std::string& mpi_version) {
  const bool root = world.rank() == 0;
  Backend backend = make_backend(args.device, cfg, world, args.comm_timeout_s);
  Ops& ops = *backend.ops;
  Communicator& device_world = backend.device_world ? *backend.device_world : world;
  ProcessGroups groups =
      make_process_groups(device_world, {cfg.plan.tp, cfg.plan.pp, cfg.plan.dp, cfg.machine.gpus_per_node});
  auto data = make_data(cfg, args);
  Trainer trainer(cfg, ops, groups, *data);
  if (root)
    std::printf("ptdp train: %lld parameters, t=%d p=%d d=%d v=%d, %s, m=%d, %d rank%s, %s, data: %s\n",
                static_cast<long long>(parameter_count(cfg.model)), cfg.plan.tp, cfg.plan.pp, cfg.plan.dp,
                cfg.plan.virtual_stages, cfg.plan.schedule.c_str(), cfg.plan.micro_batches(), world.size(),
                world.size() == 1 ? "" : "s", ops.name().c_str(), data->describe().c_str());
  const Series s = train(cfg, args, trainer, world);
  nlohmann::json result = result_header(cfg, "measured");
  result["model"]["vocab_padded"] = cfg.model.padded_vocab();  // rows of the embedding and logits
  result["software"]["mpi"] = mpi_version;
  for (const auto& [key, value] : backend.info.items())
    if (key == "driver" || key == "cuda_runtime" || key == "cublaslt" || key == "nccl") result["software"][key] = value;
  result["run"] = {{"device", device_name(args.device)}, {"ranks", world.size()}, {"iterations", args.iterations},
                   {"warmup", args.warmup}, {"data", data->describe()}, {"backend", ops.name()},
                   {"hardware", backend.info}};
  nlohmann::json metrics = metrics_json(cfg, s);
  metrics["memory_bytes"] = memory_json(cfg, trainer, groups, backend, world);
  metrics["communication"] = communication_json(groups, world, args.iterations);
  result["metrics"] = metrics;
  if (!root) return kExitOk;
  if (!args.trace.empty()) {
    write_json_atomic(args.trace, chrome_trace(s.last_timeline, "ptdp train (last iteration)"), -1);
    result["timeline"] = args.trace;
  }
  if (!args.out.empty()) write_json_atomic(args.out, result);
  const auto percent = [](const nlohmann::json& x) { return x.is_null() ? 0.0 : 100 * x.get<double>(); };
  std::printf("ptdp train: median %.4f s/iteration, %.4f model TFLOP/s per device, MFU %.1f%%, HFU %.1f%% "
              "(of %.4g TFLOP/s %s peak), bubble %.3f (analytical %.3f), peak memory %.1f MiB%s%s\n",
              metrics["iteration_s"]["median"].get<double>(), metrics["model_tflops_per_gpu"].get<double>(),
              percent(metrics["mfu"]), percent(metrics["hfu"]), cfg.machine.peak_for(to_string(cfg.plan.precision)),
              to_string(cfg.plan.precision).c_str(),
              metrics["bubble"]["measured"].get<double>(), metrics["bubble"]["analytical"].get<double>(),
              metrics["memory_bytes"]["peak_measured"].get<double>() / (1 << 20),
              args.out.empty() ? "" : ", result in ", args.out.c_str());
  return kExitOk;
}

}  // namespace ptdp::cli
