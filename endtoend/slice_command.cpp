// `ptdp slice`: runs one pipeline stage's share of a configuration on this
// device (stand-in groups, nothing communicated), feeds its measured costs to
// the simulator with the cost model's communication, and writes a result JSON
// ("mode": "slice") projecting the whole configuration on a cluster of this device.
#include <cstdio>
#include <memory>

#include "core/accounting/throughput.h"
#include "core/results/result.h"
#include "core/results/result_io.h"
#include "core/runtime/slice_runner.h"
#include "core/sim/slice_projection.h"
#include "core/tensor/allocator.h"
#include "endtoend/cli_common.h"
#include "endtoend/commands.h"

namespace ptdp::cli {

namespace {

struct SliceArgs {
  std::string config, out, calibration, stage = "0";
  SliceOptions options;
};

// What train refuses, except dropout: the runtime runs without it and the
// slice says so (Table 1's rows have dropout 0.1). --stage: a pipeline rank in
// [0, p) or "heaviest".
ConfigErrors check_slice_args(SliceArgs& a, const Config& cfg) {
  ConfigErrors e;
  for (auto& err : check_runnable(a.options.device, cfg))
    if (err.field != "model.dropout") e.push_back(std::move(err));
  if (a.options.iterations < 1) e.push_back({"--iterations", "--iterations must be at least 1"});
  if (a.options.warmup < 0 || a.options.warmup >= a.options.iterations)
    e.push_back({"--warmup", "--warmup=" + std::to_string(a.options.warmup) +
                                 " must be in [0, --iterations) so that some iterations are timed"});
  if (a.stage == "heaviest") return e;
  std::size_t used = 0;
  int k = -1;
  try {
    k = std::stoi(a.stage, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != a.stage.size() || k < 0 || k >= cfg.plan.pp)
    e.push_back({"--stage", "--stage=" + a.stage + " is neither a pipeline rank in [0, " +
                                std::to_string(cfg.plan.pp) + ") (plan.pp) nor \"heaviest\""});
  else
    a.options.stage = k;
  return e;
}

int run(SliceArgs args) {
  Config cfg;
  bool read = false;
  ConfigErrors errors = load_checked_config(args.config, 0, cfg, read);
  if (read && errors.empty()) errors = check_projectable(cfg);
  if (read && errors.empty()) errors = check_slice_args(args, cfg);
  for (auto& e : check_outputs({{"--out", args.out}}, {{"--config", args.config}, {"--calibration", args.calibration}}))
    errors.push_back(std::move(e));
  if (!errors.empty()) {
    print_refused("slice", errors);
    return kExitRefused;
  }
  std::unique_ptr<Calibration> calibration;
  try {
    if (!args.calibration.empty()) calibration = std::make_unique<Calibration>(Calibration::load(args.calibration));
    if (const std::string why = calibration ? calibration->machine_mismatch(cfg.machine.name) : ""; !why.empty())
      throw std::runtime_error(why);
    if (args.stage == "heaviest") args.options.stage = heaviest_stage(cfg, calibration.get());
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "ptdp slice: %s\n", e.what());
    return kExitRefused;
  }
  try {
    const SliceMeasurement m = measure_slice(cfg, args.options);
    const SliceProjection sp = project_slice(cfg, m, calibration.get());
    RunResult result = slice_result(cfg, args.options, m, sp, calibration.get());
    result.extra["slice"]["stage_choice"] = args.stage == "heaviest" ? "heaviest (modelled forward + backward)" : "given";
    // The measured stage ran without dropout (the runtime has none): its cost is not in the slice.
    result.extra["slice"]["dropout_not_run"] = cfg.model.dropout > 0;
    std::printf("ptdp slice: stage %d of p=%d (t=%d d=%d v=%d b=%d) on %s: measured %.4g s/iteration, peak %.3g GiB; "
                "projected %.4g s/iteration, %.4g model TFLOP/s per GPU%s\n",
                m.stage, cfg.plan.pp, cfg.plan.tp, cfg.plan.dp, cfg.plan.virtual_stages, cfg.plan.micro_batch,
                device_name(args.options.device).c_str(), m.iteration_s, static_cast<double>(m.peak_bytes) / (1 << 30),
                sp.projection.iteration_s, throughput(cfg, sp.projection.iteration_s).model_tflops_per_gpu,
                sp.projection.fits ? "" : "  DOES NOT FIT");
    if (!args.out.empty()) write_json_atomic(args.out, to_json(result));
    return kExitOk;
  } catch (const OutOfMemory& e) {  // the stage's share does not fit on this device: a finding, not a failure
    std::printf("ptdp slice: stage %d DOES NOT FIT on %s: %s\n", args.options.stage, device_name(args.options.device).c_str(),
                e.what());
    if (!args.out.empty())
      write_json_atomic(args.out, to_json(slice_out_of_memory_result(cfg, args.options, e.what(), calibration.get())));
    return kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptdp slice: %s\n", e.what());
    return kExitFailed;
  }
}

}  // namespace

Command add_slice_command(CLI::App& app) {
  auto args = std::make_shared<SliceArgs>();
  CLI::App* sub = app.add_subcommand(
      "slice", "Run one pipeline stage's share of a configuration on this device (nothing communicated), then project "
               "the whole configuration with its measured costs; write a result JSON (\"mode\": \"slice\").");
  sub->add_option("--config", args->config, "Config JSON: {\"model\", \"plan\", \"machine\", \"optimizer\"}")
      ->required()
      ->check(CLI::ExistingFile);
  auto device = std::make_shared<std::string>("cpu");
  sub->add_option("--device", *device, "Backend: cpu (fp32) or cuda (bf16/fp16 as plan.precision)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  sub->add_option("--stage", args->stage, "Pipeline rank to run, in [0, p), or \"heaviest\"")->capture_default_str();
  sub->add_option("--iterations", args->options.iterations, "Iterations to run, warm-up included")
      ->capture_default_str();
  sub->add_option("--warmup", args->options.warmup, "Leading iterations left out of the measured means")
      ->capture_default_str();
  sub->add_option("--calibration", args->calibration, "Calibration table for the modelled parts (`ptdp calibrate`)")
      ->check(CLI::ExistingFile);
  sub->add_option("--out", args->out, "Write the result JSON here (atomically; nothing on failure)");
  sub->add_option("--cpu-memory-limit", args->options.cpu_memory_limit,
                  "Testing aid: bytes the CPU backend may hold (out of memory beyond)");
  return {sub, [args, device] {
            args->options.device = device_from_name(*device).value_or(Device::cpu);  // IsMember checked the spelling
            return run(*args);
          }};
}

}  // namespace ptdp::cli
