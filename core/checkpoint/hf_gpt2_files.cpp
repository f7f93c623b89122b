// A Hugging Face GPT-2 folder (config.json, model.safetensors) read into ptdp's
// full parameters, and written from them; see hf_gpt2.h.
#include <set>

#include "core/checkpoint/hf_gpt2.h"
#include "core/checkpoint/safetensors.h"
#include "core/config/json_read.h"

namespace ptdp {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHfPrefix = "transformer.";  // GPT2LMHeadModel's name for its GPT2Model

// HF's name without GPT2LMHeadModel's prefix (GPT2Model files have none).
std::string bare_name(const std::string& name) {
  const std::string prefix = kHfPrefix;
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

// The causal mask buffers older transformers saved with the weights ("h.0.attn.bias").
bool is_mask_buffer(const std::string& name) {
  const auto ends = [&](const std::string& tail) {
    return name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends(".attn.bias") || ends(".attn.masked_bias");
}

// Every tensor the layout names, as fp32 by bare name; problems appended to `errors`.
std::map<std::string, FullTensor> read_hf_tensors(const SafetensorsFile& file, const std::set<std::string>& wanted,
                                               ConfigErrors& errors) {
  std::map<std::string, FullTensor> out;
  const std::string where = file.path().string() + ": ";
  for (const auto& [name, entry] : file.entries()) {
    const std::string bare = bare_name(name);
    if (is_mask_buffer(bare)) continue;
    if (bare != "lm_head.weight" && wanted.count(bare) == 0) {
      errors.push_back({where + name, "tensor " + name + " has no place in ptdp's GPT-2"});
      continue;
    }
    if (out.count(bare) > 0) errors.push_back({where + name, "tensor " + bare + " is in the file twice"});
    out[bare] = FullTensor{entry.shape, file.read_f32(name)};
  }
  return out;
}

// A separate output layer must be the word embedding itself: ptdp ties them.
void check_hf_tied(std::map<std::string, FullTensor>& tensors, const std::string& file, ConfigErrors& errors) {
  const auto head = tensors.find("lm_head.weight"), wte = tensors.find("wte.weight");
  if (head == tensors.end()) return;
  if (wte != tensors.end() && (head->second.shape != wte->second.shape || head->second.values != wte->second.values))
    errors.push_back({file + ": lm_head.weight", "lm_head.weight differs from wte.weight: ptdp's output layer is the "
                                                 "word embedding (tied)"});
  tensors.erase(head);
}

}  // namespace

FullParams read_hf_gpt2(const fs::path& dir, const Model& model) {
  const fs::path config_file = dir / kHfConfigFile, weights_file = dir / kHfWeightsFile;
  nlohmann::json config;
  try {
    config = read_json_file(config_file);
  } catch (const JsonRefused& e) {
    throw ConfigRefused({{config_file.string(), e.what(), ConfigErrorKind::missing}});
  }
  ConfigErrors errors = check_hf_gpt2_config(config, model, config_file.string());
  if (!errors.empty()) throw ConfigRefused(errors);
  const std::int64_t positions = hf_gpt2_positions(config);
  std::set<std::string> wanted;
  for (const HfTensorMap& m : hf_gpt2_layout(model, positions)) wanted.insert(m.hf);
  std::map<std::string, FullTensor> tensors;
  try {
    const SafetensorsFile file(weights_file);
    tensors = read_hf_tensors(file, wanted, errors);
  } catch (const SafetensorsError& e) {
    throw ConfigRefused({{weights_file.string(), e.what(), ConfigErrorKind::type}});
  }
  check_hf_tied(tensors, weights_file.string(), errors);
  if (!errors.empty()) throw ConfigRefused(errors);
  try {
    return from_hf_gpt2(tensors, model, positions);
  } catch (const std::invalid_argument& e) {
    throw ConfigRefused({{weights_file.string(), weights_file.string() + ": " + e.what(), ConfigErrorKind::rule}});
  }
}

void stage_hf_gpt2(OutputFiles& out, const fs::path& dir, const FullParams& params, const Model& model) {
  const std::map<std::string, FullTensor> hf = to_hf_gpt2(params, model);
  std::vector<TensorRef> refs;
  for (const auto& [name, t] : hf) refs.push_back({kHfPrefix + name, DType::f32, t.shape, t.values.data()});
  // transformers refuses safetensors without a framework in the metadata
  out.add_stream(dir / kHfWeightsFile, [&](StagedFile& file) { write_safetensors(file, refs, {{"format", "pt"}}); });
  out.add(dir / kHfConfigFile, hf_gpt2_config(model));
}

}  // namespace ptdp
