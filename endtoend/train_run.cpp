// Training run and its measured result: per-iteration progress on rank 0,
// then figures gathered from every rank into one result JSON.
#include "endtoend/train_run.h"

#include <cstdio>
#include <numeric>

#include "core/comm/host_gather.h"
#include "core/comm/process_groups.h"
#include "core/data/token_source.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/metrics/flops.h"
#include "core/metrics/result.h"
#include "core/metrics/result_io.h"
#include "core/runtime/trainer.h"
#include "endtoend/commands.h"

namespace ptdp::cli {

namespace {

struct Series {
  std::vector<double> seconds, loss, grad_norm, bubble;
};

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

std::unique_ptr<TokenSource> make_data(const Config& cfg, const TrainArgs& args) {
  if (args.data.empty()) return make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  return make_text_source(args.data, cfg.model.seq_len, cfg.plan.seed);
}

Series train(const Config& cfg, const TrainArgs& args, Trainer& trainer, bool root) {
  Series s;
  const double flops = model_flops(cfg.model, cfg.plan.global_batch, cfg.plan.recompute);
  for (int it = 0; it < args.iterations; ++it) {
    const IterationRecord rec = trainer.step(it);
    const double tflops = flops / (cfg.plan.world_size() * rec.seconds) / 1e12;
    if (root)
      std::printf("iter %4d/%d  loss %.4f  %.3f s  %.4f TFLOP/s per device%s\n", it + 1, args.iterations, rec.loss,
                  rec.seconds, tflops, it < args.warmup ? "  (warm-up)" : "");
    std::fflush(stdout);
    s.loss.push_back(rec.loss);
    s.grad_norm.push_back(rec.grad_norm);
    if (it >= args.warmup) {
      s.seconds.push_back(rec.seconds);
      s.bubble.push_back(measured_bubble(trainer.last_timeline()));
    }
  }
  return s;
}

nlohmann::json memory_json(const Config& cfg, Trainer& trainer, ProcessGroups& g, const CpuAllocator& alloc) {
  const MemoryTraits traits = memory_traits(Device::cpu, cfg.plan.precision, false);
  const MemoryBreakdown model = memory_model(cfg.model, cfg.plan, traits, g.coord.pp, trainer.program());
  const auto peaks = gather_host(*g.world, static_cast<double>(alloc.stats().peak_bytes));
  const auto totals = gather_host(*g.world, static_cast<double>(model.total()));
  const auto best = std::max_element(peaks.begin(), peaks.end());
  return {{"peak_measured", *best},
          {"peak_measured_per_rank", peaks},
          {"model", to_json(model)},  // this (rank 0's) breakdown
          {"model_total_per_rank", totals}};
}

nlohmann::json communication_json(ProcessGroups& g, int iterations) {
  const auto per_iter = [&](const Communicator& c) {
    const auto all = gather_host(*g.world, static_cast<double>(c.stats().bytes));
    return std::accumulate(all.begin(), all.end(), 0.0) / iterations;
  };
  return {{"tp_bytes", per_iter(*g.tp)},
          {"pp_bytes", per_iter(*g.pp)},
          {"dp_bytes", per_iter(*g.dp)},
          {"note", "payload bytes per iteration, summed over ranks"}};
}

}  // namespace

int train_and_report(const Config& cfg, const TrainArgs& args, Communicator& world) {
  const bool root = world.rank() == 0;
  CpuAllocator alloc(world.rank());
  CpuOps ops(alloc);
  ProcessGroups groups = make_process_groups(world, {cfg.plan.tp, cfg.plan.pp, cfg.plan.dp, cfg.machine.gpus_per_node});
  auto data = make_data(cfg, args);
  Trainer trainer(cfg, ops, groups, *data);
  if (root)
    std::printf("ptdp train: %lld parameters, t=%d p=%d d=%d, %s, m=%d, %s on %s, data: %s\n",
                static_cast<long long>(parameter_count(cfg.model)), cfg.plan.tp, cfg.plan.pp, cfg.plan.dp,
                cfg.plan.schedule.c_str(), cfg.plan.micro_batches(), ops.name().c_str(), args.device.c_str(),
                data->describe().c_str());
  const Series s = train(cfg, args, trainer, root);
  const auto bubbles = gather_host(world, mean(s.bubble));
  nlohmann::json result = result_header(cfg, "measured");
  result["run"] = {{"device", args.device}, {"ranks", world.size()}, {"iterations", args.iterations},
                   {"warmup", args.warmup}, {"data", data->describe()}, {"backend", ops.name()}};
  nlohmann::json metrics = throughput_metrics(cfg, median(s.seconds));
  metrics["iteration_s"] = summarize_samples(s.seconds);
  metrics["bubble"] = {{"measured", mean(bubbles)}, {"measured_per_rank", bubbles},
                       {"analytical", analytical_bubble(cfg.plan)}, {"simulated", nullptr}};
  metrics["memory_bytes"] = memory_json(cfg, trainer, groups, alloc);
  metrics["communication"] = communication_json(groups, args.iterations);
  metrics["loss"] = s.loss;
  metrics["grad_norm"] = s.grad_norm;
  result["metrics"] = metrics;
  std::vector<double> packed = pack_timeline(trainer.last_timeline());
  const auto timelines = gather_host(world, packed);
  if (!root) return kExitOk;
  if (!args.trace.empty()) {
    Timeline all;
    for (const auto& t : timelines)
      for (const auto& e : unpack_timeline(t)) all.push_back(e);
    write_json_atomic(args.trace, chrome_trace(all, "ptdp train (last iteration)"), -1);
    result["timeline"] = args.trace;
  }
  if (!args.out.empty()) write_json_atomic(args.out, result);
  const auto& tp = result["metrics"];
  std::printf("ptdp train: median %.4f s/iteration, %.4f model TFLOP/s per device, peak memory %.1f MiB%s%s\n",
              tp["iteration_s"]["median"].get<double>(), tp["model_tflops_per_gpu"].get<double>(),
              tp["memory_bytes"]["peak_measured"].get<double>() / (1 << 20), args.out.empty() ? "" : ", result in ",
              args.out.c_str());
  return kExitOk;
}

}  // namespace ptdp::cli
