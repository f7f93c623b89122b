// The acceptance suite's steps: their configs, commands and readers.
#include "endtoend/accept_suite.h"

#include "core/config/data_root.h"
#include "core/config/rank_dims.h"
#include "core/layer_ops/layer_ops.h"
#include "core/results/result_io.h"

namespace ptdp::cli {

namespace {

// Benchmark time per run, and the largest all-reduce message: on a GPU the
// sizes where NVLink and InfiniBand reach their bus bandwidth; on the CPU
// enough to reach shared memory's, in seconds on a 2-core VM.
struct Budget {
  const char* min_time;
  std::int64_t max_bytes;
  int iterations, warmup;
};
Budget budget_for(Device d) {
  return d == Device::cuda ? Budget{"0.5", 1LL << 30, 10, 3} : Budget{"0.05", 1LL << 22, 5, 1};
}

std::string accept_device(const Machine& m) { return device_name(m.device); }

// This ptdp, to run `ptdp train` with.
std::string accept_ptdp_program() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

// A benchmark program beside this ptdp (an install) or in the build's
// microbench/ folder; else its bare name, searched in PATH.
std::string bench_program(const std::string& name) {
  const auto self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  for (const auto& dir : {self, self.parent_path() / "microbench"})
    if (std::filesystem::exists(dir / name)) return (dir / name).string();
  return name;
}

std::filesystem::path example_config(const char* name) {
  return data_root() / "endtoend" / "configs" / name;
}

// The two training models: the paper's GPT block (1.7B, Table 1's first row,
// b = 4, four micro-batches a replica) and a Llama-style block (Llama 3 8B:
// grouped-query attention, RMSNorm, SwiGLU, RoPE); on the CPU their tiny
// counterparts (configs/tiny.json, tiny-llama.json: an iteration in
// milliseconds, so the suite runs in CI's tests). Over `ranks` data-parallel
// replicas, the global batch growing with them (weak scaling).
enum class TrainModel { gpt, llama };

Config train_config(const Machine& m, int ranks, TrainModel which = TrainModel::gpt) {
  const bool gpu = m.device == Device::cuda;
  const char* file = which == TrainModel::gpt ? (gpu ? "gpt-1.7b-h100.json" : "tiny.json")
                                              : (gpu ? "llama3-8b-h100.json" : "tiny-llama.json");
  Config c = load_config(example_config(file), default_machines_dir());
  c.machine = m;
  // The 8B config's 16 micro-batches a replica (B = 128 on 8 GPUs) are about
  // 6.7e16 FLOPs an iteration with full recompute; two a replica keep the
  // step's iterations within a few minutes.
  const int per_replica = which == TrainModel::llama && gpu ? 2 * c.plan.micro_batch : c.plan.global_batch / c.plan.dp;
  c.plan.global_batch = per_replica * ranks;
  c.plan.dp = ranks;
  return c;
}

// Kernel shapes: the 1.7B model's on a GPU; on the CPU a model large enough
// that its fc1 GEMM (512 x 2048 x 512) runs at the BLAS rate the cpu-host peak
// was measured at, and its attention has 256-token sequences.
Config kernel_config(const Machine& m) {
  Config c = train_config(m, 1);
  if (m.device == Device::cpu) {
    c.model.layers = 2, c.model.hidden = 512, c.model.heads = 8, c.model.seq_len = 256, c.model.vocab = 1024;
    c.plan.micro_batch = 2, c.plan.global_batch = 2;
  }
  return c;
}

// The benchmarks the kernel steps read, named from the kernel config's layer
// records as ptdp_bench_kernels names them: the MLP's first GEMM alone (the GEMM
// ceiling; under GeLU the GEMM of the fused fc1) and the attention core.
struct KernelBenchmarks {
  std::string gemm;       // "gemm/fc1_fwd"
  std::string attention;  // "attention/core", whose runs are NAME_fwd and NAME_bwd
  std::string attention_sizes;  // the first of its sizes' names, "b": the plan's own runs' names go on with it
};

KernelBenchmarks kernel_benchmarks(const Config& c) {
  KernelBenchmarks k;
  for (const LayerOp& op : layer_ops(c.model, c.plan, RankDims(c.model, c.plan), Pass::forward)) {
    if (op.part == LayerPart::fc1 && k.gemm.empty())
      k.gemm = benchmark_name(kind_traits(op.kind).basis == CostBasis::fused ? fused_part(op, kind_traits(op.kind).gemm_part) : op);
    if (op.kind == OpKind::attention_forward) k.attention = benchmark_stem(op), k.attention_sizes = kind_traits(op.kind).sizes[0];
  }
  return k;
}

std::string write_config(const AcceptContext& ctx, const std::string& name, const Config& c) {
  const auto file = ctx.work / (name + "-config.json");
  write_json_atomic(file, to_json(c));
  return file.string();
}

// A step of the suite: `argv` writing NAME.json beside its log NAME.log, for
// at most the machine's step time; a non-empty `skip`: not run, skipped for it.
StepSpec suite_step(const AcceptContext& ctx, const std::string& name, const std::string& metric,
                    std::vector<std::string> argv, StepReader read, const std::string& skip = "") {
  Step step{name, std::move(argv), ctx.work / (name + ".log"), ctx.work / (name + ".json"),
            accept_step_timeout_s(ctx.machine), nullptr, false, std::nullopt};
  if (!skip.empty()) step.not_run = StepRun{Outcome::skipped, skip, 0, nullptr};
  return {std::move(step), {metric}, std::move(read)};
}

// argv as `ranks` ranks through the launcher (exec: the launcher itself is the
// child, so it gets the SIGTERM that ends a step).
std::vector<std::string> launched(const AcceptContext& ctx, int ranks, const std::vector<std::string>& argv) {
  return {"/bin/sh", "-c", "exec " + ctx.launcher.command_line(launch_shape(ranks, ctx.machine), argv)};
}

StepSpec kernel_step(const AcceptContext& ctx, const std::string& config, const std::string& name,
                     const std::string& metric, const std::string& filter, StepReader read) {
  const auto out = ctx.work / (name + ".json");
  std::vector<std::string> argv{bench_program("ptdp_bench_kernels"), "--device", accept_device(ctx.machine),
                                "--config", config, "--benchmark_filter=" + filter,
                                "--benchmark_min_time=" + std::string(budget_for(ctx.machine.device).min_time),
                                "--benchmark_out=" + out.string(), "--benchmark_out_format=json"};
  return suite_step(ctx, name, metric, argv, std::move(read));
}

StepSpec collective_step(const AcceptContext& ctx, const std::string& name, const std::string& metric, int ranks,
                         const std::string& skip) {
  const auto out = ctx.work / (name + ".json");
  const Budget b = budget_for(ctx.machine.device);
  std::vector<std::string> argv{bench_program("ptdp_bench_collectives"), "--device", accept_device(ctx.machine),
                                "--max-bytes", std::to_string(b.max_bytes),
                                "--benchmark_filter=^collective/all_reduce/bytes",
                                "--benchmark_min_time=" + std::string(b.min_time),
                                "--benchmark_out=" + out.string(), "--benchmark_out_format=json"};
  return suite_step(ctx, name, metric, launched(ctx, ranks, argv), read_busbw(metric), skip);
}

StepSpec train_step(const AcceptContext& ctx, const std::string& name, const std::string& metric, int ranks,
                    const std::string& skip, TrainModel which = TrainModel::gpt) {
  const auto out = ctx.work / (name + ".json");
  const Budget b = budget_for(ctx.machine.device);
  const std::string config = skip.empty() ? write_config(ctx, name, train_config(ctx.machine, ranks, which)) : "";
  std::vector<std::string> argv{accept_ptdp_program(), "train", "--config", config, "--device",
                                accept_device(ctx.machine), "--iterations", std::to_string(b.iterations),
                                "--warmup", std::to_string(b.warmup), "--out", out.string()};
  return suite_step(ctx, name, metric, launched(ctx, ranks, argv),
                    read_train(which == TrainModel::gpt ? "train_tflops_per_gpu" : metric), skip);
}

}  // namespace

double accept_step_timeout_s(const Machine& machine) { return machine.device == Device::cuda ? 1800 : 300; }

std::vector<StepSpec> accept_steps(const AcceptContext& ctx) {
  const Machine& m = ctx.machine;
  const int node = m.gpus_per_node, all = m.gpus_per_node * ctx.nodes;
  const std::string one_node = ctx.nodes == 1 ? "--nodes 1: no step across nodes" : "";
  const Config kernel = kernel_config(m);
  const std::string kernels = write_config(ctx, "kernels", kernel);
  const KernelBenchmarks k = kernel_benchmarks(kernel);
  std::vector<StepSpec> steps;
  steps.push_back(kernel_step(ctx, kernels, "gemm", "gemm_tflops", "^" + k.gemm + "/", read_gemm("gemm_tflops", k.gemm + "/")));
  steps.push_back(kernel_step(ctx, kernels, "attention", "attention_tflops",
                              "^" + k.attention + "_(fwd|bwd)/" + k.attention_sizes + ":",
                              read_attention("attention_tflops", k.attention)));
  steps.push_back(collective_step(ctx, "collectives_intra", "allreduce_busbw_gbs_intra", node,
                                  node < 2 ? "one rank per node: no collective within a node" : ""));
  steps.push_back(collective_step(ctx, "collectives_inter", "allreduce_busbw_gbs_inter", all, one_node));
  steps.push_back(train_step(ctx, "train", "train_tflops_per_gpu", node, ""));
  steps.push_back(train_step(ctx, "train_llama", "train_llama_tflops_per_gpu", node, "", TrainModel::llama));
  steps.push_back(train_step(ctx, "weak_scaling", "weak_scaling_efficiency", all, one_node));
  return steps;
}

void finish_weak_scaling(const StepOutcome& single_node, StepOutcome& weak) {
  if (weak.status != Outcome::ok) return;
  const auto figure = [](const std::map<std::string, double>& m) {
    const auto it = m.find("train_tflops_per_gpu");
    return it == m.end() ? 0.0 : it->second;
  };
  const double all = figure(weak.values), one = figure(single_node.values);
  const double projected_all = figure(weak.projected), projected_one = figure(single_node.projected);
  weak.details["single_node_tflops_per_gpu"] = one;
  weak.values.clear();
  weak.projected.clear();
  if (!(one > 0)) {
    weak.status = Outcome::failed;
    weak.reason = "no single-node training figure to scale against (step train: " + single_node.reason + ")";
    return;
  }
  weak.values["weak_scaling_efficiency"] = all / one;
  if (projected_all > 0 && projected_one > 0) weak.projected["weak_scaling_efficiency"] = projected_all / projected_one;
}

}  // namespace ptdp::cli
