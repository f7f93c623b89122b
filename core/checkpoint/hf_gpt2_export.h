// The Hugging Face GPT-2 export as a whole: config.json and model.safetensors
// (hf_gpt2.h) and a check file holding a fixed batch and ptdp's own loss on it
// with the exported weights, which an independent implementation loading the
// folder must reproduce (tests/report/hf_gpt2_torch_check.py: transformers).
#pragma once
#include <filesystem>
#include <vector>

#include "core/checkpoint/fixed_batch_loss.h"
#include "core/checkpoint/hf_gpt2.h"

namespace ptdp {

inline constexpr const char* kHfCheckFile = "ptdp_check.json";
inline constexpr int kHfCheckBatch = 2;  // sequences in the check's batch

// {"schema", "tokens", "targets", "loss", ...}: "loss" is ptdp's forward with
// exactly the exported tensors (read back through the import, as a model
// without vocabulary padding); "loss_as_trained", present when the model pads
// its vocabulary, is the loss with the padded rows, whose logits enter ptdp's
// softmax but which HF does not have.
// The files an export writes into `dir`: config.json, model.safetensors, the check file.
std::vector<std::filesystem::path> hf_gpt2_export_files(const std::filesystem::path& dir);

nlohmann::json hf_gpt2_check(const FullParams& params, const Model& model, const FixedBatch& batch);

// Stages DIR/config.json, DIR/model.safetensors and DIR/ptdp_check.json in
// `out` (committed with its other files, all or none). Takes nothing but full
// fp32 parameters by ptdp name and the model, so any source of weights (a
// training run, a checkpoint) exports the same way.
void stage_hf_gpt2_export(OutputFiles& out, const std::filesystem::path& dir, const FullParams& params,
                          const Model& model, const FixedBatch& batch);

}  // namespace ptdp
