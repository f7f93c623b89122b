// The export folder and its self-check; see hf_gpt2_export.h.
#include "core/checkpoint/hf_gpt2_export.h"

namespace ptdp {

std::vector<std::filesystem::path> hf_gpt2_export_files(const std::filesystem::path& dir) {
  return {dir / kHfConfigFile, dir / kHfWeightsFile, dir / kHfCheckFile};
}

nlohmann::json hf_gpt2_check(const FullParams& params, const Model& model, const FixedBatch& batch) {
  Model exported = model;
  exported.vocab_pad_to = 1;  // what HF holds: V rows
  const FullParams as_exported = from_hf_gpt2(to_hf_gpt2(params, model), exported, model.seq_len);
  nlohmann::json j = to_json(batch);
  j["schema"] = "ptdp.hf_gpt2_check/1";
  j["loss"] = fixed_batch_loss(exported, as_exported, batch);
  if (model.padded_vocab() != model.vocab) j["loss_as_trained"] = fixed_batch_loss(model, params, batch);
  j["about"] = "mean cross-entropy over tokens/targets (b, s), natural log, by ptdp's fp32 CPU forward with the "
               "weights in this folder";
  return j;
}

void stage_hf_gpt2_export(OutputFiles& out, const std::filesystem::path& dir, const FullParams& params,
                          const Model& model, const FixedBatch& batch) {
  stage_hf_gpt2(out, dir, params, model);
  out.add(dir / kHfCheckFile, hf_gpt2_check(params, model, batch));
}

}  // namespace ptdp
