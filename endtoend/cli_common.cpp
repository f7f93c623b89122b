// Shared helpers of the subcommands.
#include "endtoend/cli_common.h"

#include <cstdio>
#include <filesystem>

#include "core/config/json_read.h"
#include "core/io/staged_file.h"
#include "core/results/output_files.h"
#include "core/runtime/backend.h"
#include "core/sim/plan_limits.h"

namespace ptdp::cli {

void print_refused(const std::string& command, const ConfigErrors& errors) {
  std::fprintf(stderr, "ptdp %s: input refused (%zu problem%s):\n", command.c_str(), errors.size(),
               errors.size() == 1 ? "" : "s");
  for (const auto& e : errors)
    std::fprintf(stderr, "  %s: %s\n", cut_text(e.field).c_str(), cut_text(e.message, 2 * kMessageLimit).c_str());
}

ConfigErrors load_checked_config(const std::string& file, int world_size, Config& out, bool& read,
                                 const MachineAtHand& at_hand) {
  read = false;
  try {
    out = load_config(file, default_machines_dir(), at_hand);
  } catch (const ConfigRefused& e) {
    return e.errors();
  }
  read = true;
  return validate(out, world_size);
}

ConfigErrors check_runnable(Device device, const Config& cfg) {
  ConfigErrors e;
  if (const std::string why = device_unavailable(device); !why.empty())
    e.push_back({"--device", "--device=" + device_name(device) + ": " + why});
  if (device == Device::cpu && cfg.plan.precision != Precision::fp32)
    e.push_back({"plan.precision", "plan.precision=" + to_string(cfg.plan.precision) +
                                       " is not supported on --device cpu (the CPU backend is fp32)"});
  if (device == Device::cuda && cfg.plan.precision == Precision::fp32)
    e.push_back({"plan.precision", "plan.precision=fp32 is not supported on --device cuda (bf16 or fp16)"});
  if (cfg.plan.grad_precision != GradPrecision::fp32 && cfg.plan.precision != Precision::fp32)
    e.push_back({"plan.grad_precision", "plan.grad_precision=compute is modelled by `ptdp project` only; the runtime "
                                        "accumulates and reduces its gradients in fp32"});
  if (cfg.model.dropout > 0)
    e.push_back({"model.dropout", "model.dropout > 0 is modelled by `ptdp project` only; the runtime runs without "
                                  "dropout"});
  for (auto& err : check_work_limits(cfg.model, cfg.plan)) e.push_back(std::move(err));
  const std::int64_t head_dim = cfg.model.heads > 0 ? cfg.model.hidden / cfg.model.heads : 0;
  if (const std::string why = attention_unavailable(device, cfg.plan.attention, head_dim); !why.empty())
    e.push_back({"plan.attention", why});
  return e;
}

std::vector<std::string> runnable_warnings(const Config& cfg) {
  std::vector<std::string> w;
  if (cfg.plan.shards_optimizer() && cfg.plan.dp == 1)
    w.push_back("plan.dp_sharding=" + to_string(cfg.plan.dp_sharding) +
                " with plan.dp=1 shards nothing: every rank keeps the whole state it would shard, and the "
                "reduce-scatters and all-gathers are copies");
  return w;
}

ConfigErrors check_outputs(const std::vector<OutputOption>& outputs, const std::vector<OutputOption>& inputs) {
  ConfigErrors e;
  const auto same = [](const std::string& a, const std::string& b) {
    return std::filesystem::absolute(a).lexically_normal() == std::filesystem::absolute(b).lexically_normal() ||
           same_file(a, b);
  };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, path] = outputs[i];
    if (path.empty()) continue;
    if (const std::string why = output_path_problem(path); !why.empty()) e.push_back({option, option + "=" + path + ": " + why});
    for (std::size_t k = 0; k < i; ++k)
      if (!outputs[k].second.empty() && same(outputs[k].second, path))
        e.push_back({option, option + " and " + outputs[k].first + " name the same file " + path});
    for (const auto& [input_option, input] : inputs)
      if (!input.empty() && same(input, path))
        e.push_back({option, option + "=" + path + " is the input " + input_option + "; an output never replaces an input"});
  }
  return e;
}

}  // namespace ptdp::cli
