// config.json of a Hugging Face GPT-2: written from a ptdp model, and checked
// against one before its weights are imported; see hf_gpt2.h. Absent keys take
// transformers' GPT2Config defaults, except the sizes, which must be given.
#include <cmath>

#include "core/checkpoint/hf_gpt2.h"
#include "core/config/json_read.h"
#include "core/kernels/ops.h"

namespace ptdp {

namespace {

// The tanh-form GeLU under the names transformers gives it (the same function).
bool is_tanh_gelu(const std::string& name) { return name == kHfActivation || name == "gelu_pytorch_tanh"; }

// Reads config[key] as T into `out`; an error (naming "FILE: KEY") when it is
// not a T, or absent and `required`. Returns whether `out` was read.
template <class T>
bool read_hf_key(const nlohmann::json& config, const std::string& file, const std::string& key, bool required, T& out,
              ConfigErrors& errors) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) {
    if (required) errors.push_back({file + ": " + key, key + " is missing", ConfigErrorKind::missing});
    return false;
  }
  if (std::string why = json_convert(*it, out); !why.empty()) {
    errors.push_back({file + ": " + key, key + " " + why + " (got " + json_excerpt(*it) + ")", ConfigErrorKind::type});
    return false;
  }
  return true;
}

// The sizes that must be ptdp's model's (n_inner: HF's default 4·n_embd when absent).
void check_hf_sizes(const nlohmann::json& c, const Model& m, const std::string& file, ConfigErrors& e) {
  const struct {
    const char* key;
    std::int64_t ours;
    const char* field;
  } sizes[] = {{"n_layer", m.layers, "model.layers"}, {"n_embd", m.hidden, "model.hidden"},
               {"n_head", m.heads, "model.heads"},    {"vocab_size", m.vocab, "model.vocab"}};
  std::int64_t n_embd = 0;
  for (const auto& s : sizes) {
    std::int64_t v = 0;
    if (!read_hf_key(c, file, s.key, true, v, e)) continue;
    if (std::string(s.key) == "n_embd") n_embd = v;
    if (v != s.ours)
      e.push_back({file + ": " + s.key, std::string(s.key) + "=" + std::to_string(v) + " but " + s.field + "=" +
                                            std::to_string(s.ours) + ": the config must describe the imported model"});
  }
  std::int64_t inner = 4 * n_embd;
  read_hf_key(c, file, "n_inner", false, inner, e);
  if (n_embd > 0 && inner != m.ffn())
    e.push_back({file + ": n_inner", "n_inner=" + std::to_string(inner) + " (null: 4·n_embd) but the model's MLP size "
                                     "(model.ffn_hidden) is " + std::to_string(m.ffn())});
  std::int64_t positions = 0;
  if (read_hf_key(c, file, "n_positions", true, positions, e) && positions < m.seq_len)
    e.push_back({file + ": n_positions", "n_positions=" + std::to_string(positions) + " is less than model.seq_len=" +
                                             std::to_string(m.seq_len) + ": every position needs an embedding"});
}

// The choices ptdp's forward makes once for all models (GeLU, epsilon, tied
// output layer, attention scaled by 1/sqrt(d)): a config that differs cannot be computed exactly.
void check_hf_computation(const nlohmann::json& c, const std::string& file, ConfigErrors& e) {
  std::string type = "gpt2", act = kHfActivation;
  if (read_hf_key(c, file, "model_type", false, type, e) && type != "gpt2")
    e.push_back({file + ": model_type", "model_type=\"" + type + "\": only GPT-2 (\"gpt2\") maps onto ptdp's GPT"});
  if (read_hf_key(c, file, "activation_function", false, act, e) && !is_tanh_gelu(act))
    e.push_back({file + ": activation_function", "activation_function=\"" + act + "\" is not ptdp's GeLU, the tanh "
                                                 "form (\"" + std::string(kHfActivation) + "\")"});
  double eps = kLayerNormEps;
  if (read_hf_key(c, file, "layer_norm_epsilon", false, eps, e) && std::abs(eps - kLayerNormEps) > 1e-12)
    e.push_back({file + ": layer_norm_epsilon", "layer_norm_epsilon=" + json_excerpt(c.at("layer_norm_epsilon")) +
                                                " but ptdp's layernorms use " + json_excerpt(kLayerNormEps)});
  const struct {
    const char* key;
    bool ptdp;
    const char* why;
  } flags[] = {{"tie_word_embeddings", true, "ptdp's output layer is the word embedding"},
               {"scale_attn_weights", true, "ptdp scales attention scores by 1/sqrt(head dim)"},
               {"scale_attn_by_inverse_layer_idx", false, "ptdp does not scale attention by layer"},
               {"add_cross_attention", false, "ptdp's GPT has no cross-attention"}};
  for (const auto& f : flags) {
    bool v = f.ptdp;
    if (read_hf_key(c, file, f.key, false, v, e) && v != f.ptdp)
      e.push_back({file + ": " + f.key, std::string(f.key) + "=" + (v ? "true" : "false") + ": " + f.why});
  }
}

}  // namespace

nlohmann::json hf_gpt2_config(const Model& m) {
  return {{"architectures", nlohmann::json::array({"GPT2LMHeadModel"})},
          {"model_type", "gpt2"},
          {"vocab_size", m.vocab},
          {"n_positions", m.seq_len},
          {"n_embd", m.hidden},
          {"n_layer", m.layers},
          {"n_head", m.heads},
          {"n_inner", m.ffn()},
          {"activation_function", kHfActivation},
          {"layer_norm_epsilon", kLayerNormEps},
          {"resid_pdrop", m.dropout},
          {"embd_pdrop", m.dropout},
          {"attn_pdrop", m.dropout},
          {"initializer_range", 0.02},
          {"scale_attn_weights", true},
          {"scale_attn_by_inverse_layer_idx", false},
          {"reorder_and_upcast_attn", false},
          {"tie_word_embeddings", true},
          {"bos_token_id", m.vocab - 1},
          {"eos_token_id", m.vocab - 1},
          {"torch_dtype", "float32"}};
}

ConfigErrors check_hf_gpt2_config(const nlohmann::json& config, const Model& model, const std::string& file) {
  if (!config.is_object()) return {{file, file + " is not a JSON object", ConfigErrorKind::type}};
  ConfigErrors e;
  check_hf_sizes(config, model, file, e);
  check_hf_computation(config, file, e);
  return e;
}

ConfigErrors hf_gpt2_block_problems(const Model& m, const std::string& option) {
  ConfigErrors e;
  const auto refuse = [&](bool differs, const char* key, const std::string& value) {
    if (differs)
      e.push_back({std::string("model.") + key, option + ": GPT-2 has no model." + key + "=" + value +
                                                    " (the block must be GPT-2's)"});
  };
  refuse(m.kv() != m.heads, "kv_heads", std::to_string(m.kv_heads));
  refuse(m.norm != Norm::layernorm, "norm", to_string(m.norm));
  refuse(m.activation != Activation::gelu, "activation", to_string(m.activation));
  refuse(m.position != Position::learned, "position", to_string(m.position));
  refuse(!m.bias, "bias", "false");
  refuse(!m.tied_embeddings, "tied_embeddings", "false");
  return e;
}

std::int64_t hf_gpt2_positions(const nlohmann::json& config) { return config.at("n_positions").get<std::int64_t>(); }

}  // namespace ptdp
