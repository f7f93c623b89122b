// `ptdp export --load CKPT --format hf-gpt2 --out DIR`: a saved checkpoint's
// weights (the fp32 masters, put together from whichever shards hold them:
// core/checkpoint/checkpoint_reader.h) as a Hugging Face GPT-2 folder, with the
// same self-check file `ptdp train --export-hf` writes (core/checkpoint/hf_gpt2_export.h).
#include <cstdio>
#include <memory>

#include "core/checkpoint/checkpoint.h"
#include "core/checkpoint/checkpoint_reader.h"
#include "core/checkpoint/hf_gpt2_export.h"
#include "core/config/json_read.h"
#include "core/data/token_source.h"
#include "core/results/output_files.h"
#include "endtoend/cli_common.h"
#include "endtoend/commands.h"

namespace ptdp::cli {

namespace {

struct ExportArgs {
  std::string load, format = "hf-gpt2", out, data;
};

// The checkpoint's config (model, plan, optimizer from its manifest), or the reason it has none.
std::optional<Config> checkpoint_config(const std::string& load, ConfigErrors& errors) {
  try {
    if (!holds_checkpoint(load) && !std::filesystem::exists(std::filesystem::path(load) / kManifestName)) {
      errors.push_back({"--load", "--load " + load + " holds no checkpoint (no manifest.json, no latest)"});
      return std::nullopt;
    }
    const Manifest m = read_manifest(resolve_checkpoint(load) / kManifestName);
    const nlohmann::json j = {{"model", m.model}, {"plan", m.plan}, {"optimizer", m.optimizer}, {"machine", "cpu-host"}};
    return config_from_json(j, default_machines_dir());
  } catch (const ConfigRefused& e) {
    for (const ConfigError& err : e.errors()) errors.push_back({"--load " + err.field, err.message, err.kind});
  } catch (const std::exception& e) {
    errors.push_back({"--load", "--load " + load + ": " + e.what()});
  }
  return std::nullopt;
}

// Every parameter the export writes, in the checkpoint at its full shape (the
// manifest's model is the config's, but its pieces are what the shards hold).
ConfigErrors exported_parameter_problems(const std::string& load, const Model& model) {
  ConfigErrors errors;
  const CheckpointReader reader(load);
  const std::map<std::string, Shape> saved = reader.parameters();
  for (const ParamShape& p : ptdp_param_shapes(hf_gpt2_layout(model, model.seq_len))) {
    const auto it = saved.find(p.name);
    if (it == saved.end() || it->second != p.shape)
      errors.push_back({"--load", (reader.folder() / kManifestName).string() + ": parameter " + p.name + " is " +
                                      (it == saved.end() ? std::string("in no piece") : shape_string(it->second)) +
                                      ", the model's is " + shape_string(p.shape)});
  }
  return errors;
}

int run(const ExportArgs& args) {
  ConfigErrors errors;
  const std::optional<Config> cfg = checkpoint_config(args.load, errors);
  std::vector<OutputOption> outputs;
  for (const auto& f : hf_gpt2_export_files(args.out)) outputs.push_back({"--out", f.string()});
  for (auto& e : check_outputs(outputs)) errors.push_back(std::move(e));
  if (cfg) {
    ConfigErrors ckpt = checkpoint_problems(args.load, *cfg, "--load");
    const ConfigErrors block = hf_gpt2_block_problems(cfg->model, "--format hf-gpt2");
    if (ckpt.empty() && block.empty()) ckpt = exported_parameter_problems(args.load, cfg->model);
    errors.insert(errors.end(), ckpt.begin(), ckpt.end());
    errors.insert(errors.end(), block.begin(), block.end());
    if (std::string why = args.data.empty() ? "" : text_source_problem(args.data, cfg->model.seq_len); !why.empty())
      errors.push_back({"--data", why});
  }
  if (!errors.empty()) {
    print_refused("export", errors);
    return kExitRefused;
  }
  try {
    CheckpointReader reader(args.load);
    FullParams full;
    for (const ParamShape& p : ptdp_param_shapes(hf_gpt2_layout(cfg->model, cfg->model.seq_len)))
      full[p.name] = {p.shape, reader.full("master", p.name)};
    const auto data = args.data.empty() ? make_synthetic_source(cfg->model.vocab, cfg->plan.seed)
                                        : make_text_source(args.data, cfg->model.seq_len, cfg->plan.seed);
    OutputFiles files;
    stage_hf_gpt2_export(files, args.out, full, cfg->model, fixed_batch(*data, kHfCheckBatch, cfg->model.seq_len));
    files.commit();
    std::printf("ptdp export: %s (step %d) as a Hugging Face GPT-2 in %s (%.1f MiB of shards read)\n",
                reader.folder().c_str(), reader.manifest().step, args.out.c_str(),
                static_cast<double>(reader.bytes_read()) / (1 << 20));
    return kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptdp export: %s\n", e.what());
    return kExitFailed;
  }
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* sub = app.add_subcommand("export", "Write a saved checkpoint's weights in another format");
  sub->add_option("--load", args->load, "Checkpoint folder or save directory (ptdp train --save)")->required();
  sub->add_option("--format", args->format, "Format to write")->check(CLI::IsMember({"hf-gpt2"}))->capture_default_str();
  sub->add_option("--out", args->out, "Folder for config.json, model.safetensors and ptdp_check.json")->required();
  sub->add_option("--data", args->data, "Text file whose bytes give the check batch (default: the synthetic tokens)")
      ->check(CLI::ExistingFile);
  return {sub, [args] { return run(*args); }};
}

}  // namespace ptdp::cli
