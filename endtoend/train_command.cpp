// `ptdp train`: checks every input before any work, trains, reports one line per
// iteration on rank 0, and writes the measured result JSON (and a trace).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "core/checkpoint/hf_gpt2_export.h"
#include "core/comm/placement.h"
#include "core/comm/world.h"
#include "core/config/config.h"
#include "core/data/token_source.h"
#include "core/runtime/backend.h"
#include "core/runtime/peak_at_hand.h"
#include "core/tensor/allocator.h"
#include "core/topology/process_place.h"
#include "endtoend/cli_common.h"
#include "endtoend/commands.h"
#include "endtoend/option_ranges.h"
#include "endtoend/train_checkpoint.h"
#include "endtoend/train_memory.h"
#include "endtoend/train_run.h"

namespace ptdp::cli {

namespace {

// --iterations 0 runs no step: it only writes the initial weights, so it needs
// --save or --export-hf, and has nothing to put in --out or --trace (a result
// without iteration times or losses would read as a measurement).
ConfigErrors check_initial_weights_args(const TrainArgs& a) {
  ConfigErrors e;
  if (a.iterations != 0) return e;
  for (const auto& [option, value] : {std::pair{"--out", &a.out}, {"--trace", &a.trace}})
    if (!value->empty())
      e.push_back({option, std::string(option) + " has nothing to record: --iterations=0 runs no step (it writes "
                           "the initial weights to --save or --export-hf)"});
  if (a.save.empty() && a.export_hf.empty())
    e.push_back({"--iterations", "--iterations=0 runs no step: it writes the initial weights, so name --save DIR "
                                 "or --export-hf DIR"});
  return e;
}

// Input problems beyond the config's own rules: options and device.
ConfigErrors check_train_args(const TrainArgs& a, const Config& cfg) {
  ConfigErrors e = check_initial_weights_args(a);
  if (a.iterations > 0 && a.warmup >= a.iterations)
    e.push_back({"--warmup", "--warmup=" + std::to_string(a.warmup) + " must be in [0, --iterations) so that some "
                             "iterations are timed"});
  for (auto& err : check_runnable(a.device, cfg)) e.push_back(std::move(err));
  if (const char* v = std::getenv(kMeasurePeakVariable); !peak_setting(v))
    e.push_back({kMeasurePeakVariable, std::string(kMeasurePeakVariable) + "=\"" + cut_text(v) +
                                           "\" must be 1 (the CPU's peak measured here, cached; the default), 0 "
                                           "(the machine profile's peak) or again (measured anew, the best rates "
                                           "kept)"});
  if (!a.data.empty() && cfg.model.vocab < 256)
    e.push_back({"model.vocab", "--data trains on bytes: model.vocab=" + std::to_string(cfg.model.vocab) +
                                    " must be at least 256"});
  if (std::string why = a.data.empty() ? "" : text_source_problem(a.data, cfg.model.seq_len); !why.empty())
    e.push_back({"--data", why});  // empty, too short, a device or FIFO: before any work
  try {
    (void)fault_of(a, cfg.plan.world_size());
  } catch (const FaultRefused& err) {
    e.push_back({"--fault", "--fault=" + a.fault + ": " + err.what()});
  }
  for (const auto& [option, value] : {std::pair{"--init-hf", &a.init_hf}, {"--export-hf", &a.export_hf}})
    if (!value->empty())
      for (auto& err : hf_gpt2_block_problems(cfg.model, option)) e.push_back(std::move(err));
  return e;
}

// Reports running out of memory and ends with its status. Several ranks: leave
// without MPI_Abort (its code is fixed) so mpirun ends the job with this
// rank's status, and the sweep runner sees out-of-memory.
int out_of_memory(const std::string& why, Communicator& world) {
  std::fprintf(stderr, "ptdp train: %s\n", why.c_str());
  std::fflush(stderr);
  if (world.size() > 1) std::_Exit(kExitOutOfMemory);
  return kExitOutOfMemory;
}

// The weights of --init-hf, read by every rank (each takes its shard later);
// problems (fields named) appended to `errors`.
std::optional<FullParams> import_hf(const TrainArgs& args, const Config& cfg, bool root, ConfigErrors& errors) {
  if (args.init_hf.empty()) return std::nullopt;
  try {
    FullParams full = read_hf_gpt2(args.init_hf, cfg.model);
    if (root && cfg.model.padded_vocab() != cfg.model.vocab)
      std::fprintf(stderr, "ptdp train: warning: --init-hf: the %d padded vocabulary rows start at zero and their "
                           "logits enter the softmax, which the Hugging Face model does not have; model.vocab_pad_to=1 "
                           "computes its loss exactly\n", cfg.model.padded_vocab() - cfg.model.vocab);
    return full;
  } catch (const ConfigRefused& e) {
    for (const ConfigError& err : e.errors()) errors.push_back({"--init-hf " + err.field, err.message, err.kind});
    return std::nullopt;
  }
}

// --export-hf's three files, checked as the other outputs.
std::vector<OutputOption> hf_outputs(const std::string& dir) {
  std::vector<OutputOption> out;
  if (!dir.empty())
    for (const auto& f : hf_gpt2_export_files(dir)) out.push_back({"--export-hf", f.string()});
  return out;
}

// The hardware of this run; `hw.detected` set when the config names no
// machine and the one at hand is taken (only `ptdp train` allows that).
MachineAtHand machine_at_hand_of(Hardware& hw) {
  return [&hw] {
    hw.detected = true;
    return machine_at_hand(hw, default_machines_dir());
  };
}

// Warnings for a named profile that contradicts the hardware; recorded in the result too.
void check_named_machine(const Config& cfg, Hardware& hw, bool root) {
  hw.profile = cfg.machine.name;
  if (hw.detected) return;
  hw.mismatch = hardware_mismatches(cfg.machine, hw);
  if (root)
    for (const std::string& w : hw.mismatch) std::fprintf(stderr, "ptdp train: warning: %s\n", w.c_str());
}

// On the CPU, the peak and bandwidth behind MFU measured on this machine
// (cached per CPU; PTDP_MEASURE_PEAK=again measures anew), unless
// PTDP_MEASURE_PEAK=0: then the profile's, and the result names the CPU the
// profile was measured on. Collective over `world`.
void take_peak_at_hand(Config& cfg, Hardware& hw, Device device, Communicator& world, bool root) {
  hw.profile_measured_on = profile_measured_on(cfg.machine);
  const PeakSetting setting = peak_setting(std::getenv(kMeasurePeakVariable)).value_or(PeakSetting::profile);
  if (device != Device::cpu || cfg.machine.device != Device::cpu || setting == PeakSetting::profile) return;
  std::vector<std::string> warnings;
  const MeasuredPeak peak = cpu_peak_at_hand(hw, world, setting, warnings);
  if (root)
    for (const std::string& w : warnings) std::fprintf(stderr, "ptdp train: warning: %s\n", w.c_str());
  use_measured_peak(cfg.machine, peak);
  hw.measured_peak = peak;
  hw.profile_measured_on.clear();
}

int run(const TrainArgs& args) {
  WorldSession session(args.comm_timeout_s);
  Communicator& world = session.world();
  const bool root = world.rank() == 0;  // only rank 0 prints refusals
  const ProcessPlace here = this_process();
  Hardware hw = detect_hardware(args.device, gather_placement(world, here.host), here);
  Config cfg;
  bool read = false;
  ConfigErrors errors = load_checked_config(args.config, world.size(), cfg, read, machine_at_hand_of(hw));
  if (read)
    for (auto& e : check_train_args(args, cfg)) errors.push_back(std::move(e));
  if (errors.empty() && !args.allow_oversubscribe_memory) errors = check_train_memory(cfg, args.device, here.local_rank, world);
  std::optional<FullParams> initial;
  if (errors.empty()) initial = import_hf(args, cfg, root, errors);
  if (!errors.empty()) {
    if (root) print_refused("train", errors);
    return kExitRefused;
  }
  if (root)
    for (const std::string& w : runnable_warnings(cfg)) std::fprintf(stderr, "ptdp train: warning: %s\n", w.c_str());
  check_named_machine(cfg, hw, root);
  // Only rank 0 writes, so only it checks; every rank learns the verdict before any work.
  std::vector<OutputOption> outputs{{"--trace", args.trace}, {"--out", args.out}};
  for (OutputOption& o : hf_outputs(args.export_hf)) outputs.push_back(std::move(o));
  ConfigErrors bad_outputs = root ? check_outputs(outputs, {{"--config", args.config}, {"--data", args.data}})
                                  : ConfigErrors{};
  if (root)
    for (auto& e : check_checkpoint_args(args, cfg)) bad_outputs.push_back(std::move(e));
  if (world.all_reduce_host(bad_outputs.empty() ? 0.0 : 1.0, ReduceOp::max) > 0) {
    if (root) print_refused("train", bad_outputs);
    return kExitRefused;
  }
  take_peak_at_hand(cfg, hw, args.device, world, root);
  try {
    return train_and_report(cfg, args, world, here, session.library_version(), hw, initial ? &*initial : nullptr);
  } catch (const OutOfMemory& e) {
    return out_of_memory(e.what(), world);
  } catch (const std::bad_alloc&) {  // a host allocation outside the tensor allocator
    return out_of_memory("rank " + std::to_string(world.rank()) + ": out of host memory (std::bad_alloc)", world);
  } catch (const std::exception& e) {
    const std::string why = std::string("ptdp train: ") + e.what();
    if (world.size() > 1) world.abort(why);  // the other ranks would wait for this one
    std::fprintf(stderr, "%s\n", why.c_str());
    return kExitFailed;
  }
}

}  // namespace

Command add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* sub = app.add_subcommand("train", "Train a GPT for real and write a measured result JSON.\n"
                                              "Multi-rank: mpirun -np N ptdp train --config FILE (N = tp·pp·dp).");
  sub->add_option("--config", args->config,
                  "Config JSON: {\"model\", \"plan\", \"machine\", \"optimizer\"}; without \"machine\", the "
                  "machine at hand (cpu-host, or the GPU's profile by its name)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--iterations", args->iterations, "Iterations to run, warm-up included; 0 runs none and writes "
                                                    "the initial weights to --save (as step 0) or --export-hf")
      ->capture_default_str()
      ->check(integer_in(0, kMaxIterations));
  sub->add_option("--warmup", args->warmup, "Leading iterations left out of the timing statistics (fewer than "
                                            "--iterations; ignored with --iterations 0)")
      ->capture_default_str()
      ->check(integer_in(0, kMaxIterations));
  auto device = std::make_shared<std::string>("cpu");
  sub->add_option("--device", *device, "Backend: cpu (fp32) or cuda (bf16/fp16 as plan.precision; NCCL)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  sub->add_option("--out", args->out, "Write the result JSON here (atomically; nothing on failure)");
  sub->add_option("--data", args->data, "Train on this text file as bytes (vocab 256) instead of synthetic tokens")
      ->check(CLI::ExistingFile);
  sub->add_option("--trace", args->trace, "Write a Chrome trace of the last iteration (a track per rank)");
  sub->add_option("--comm-timeout", args->comm_timeout_s,
                  "Seconds any communication may wait before the job is aborted (a dead or silent peer)")
      ->capture_default_str()
      ->check(number_in(kMinCommTimeoutS, kMaxCommTimeoutS));
  sub->add_flag("--allow-oversubscribe-memory", args->allow_oversubscribe_memory,
               "Run a plan whose modelled memory exceeds the device's (host RAM on the CPU, the GPU's on CUDA); "
               "refused by default, before anything is allocated");
  sub->add_option("--init-hf", args->init_hf,
                  "Start from the Hugging Face GPT-2 in this folder (config.json, model.safetensors; the config must "
                  "describe the model); every layout takes its shard")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--export-hf", args->export_hf,
                  "After training, write the weights to this folder as a Hugging Face GPT-2 (config.json, "
                  "model.safetensors) with ptdp_check.json: a fixed batch and ptdp's loss on it");
  sub->add_option("--fault", args->fault,
                  "Testing aid: KIND:RANK:ITERATION makes RANK (0 to ranks - 1) die (kill), stop answering (hang, "
                  "2 ranks or more), run out of device memory (oom), fail a host allocation (alloc: std::bad_alloc) "
                  "or read a NaN loss (nan) at ITERATION (0 to --iterations - 1), to check that the job ends instead "
                  "of hanging; slow:RANK:FACTOR makes RANK's forwards and backwards take FACTOR (in (1, 100]) times "
                  "as long, a planted straggler for the summary to find");
  sub->add_option("--save", args->save, "Save checkpoints into this folder (DIR/iter_NNNNNNN, DIR/latest; "
                                        "docs/checkpoint-format.md); at the last iteration and every --save-every");
  sub->add_option("--save-every", args->save_every, "Also save after every N iterations")
      ->capture_default_str()
      ->check(integer_in(0, kMaxIterations));
  sub->add_option("--keep", args->keep, "Keep only the newest K checkpoints in --save (0: all)")
      ->capture_default_str()
      ->check(integer_in(0, kMaxIterations));
  sub->add_flag("--overwrite", args->overwrite, "--save may replace another run's checkpoints in its folder");
  sub->add_option("--load", args->load, "Continue from this checkpoint (a --save folder: its latest; or one "
                                        "iter_* folder), in this config's (t, p, d) layout");
  return {sub, [args, device] {
            args->device = device_from_name(*device).value_or(Device::cpu);  // IsMember checked the spelling
            return run(*args);
          }};
}

}  // namespace ptdp::cli
