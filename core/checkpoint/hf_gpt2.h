// Hugging Face GPT-2 interchange: ptdp's full parameters to and from the layout
// of transformers' GPT2LMHeadModel, a folder holding config.json and
// model.safetensors (docs/hf-gpt2.md has the table). Letters: l layers, h
// hidden, a heads, d = h/a head dim, f MLP inner size, s sequence (positions),
// V vocabulary, V' = Model::padded_vocab().
//
// ptdp's linear weights are (out, in) (y = x·Wᵀ); HF's Conv1D weights are
// (in, out) (y = x·W), so every projection is transposed. ptdp's q rows are
// (a, d) and its kv rows per head (a, 2, d) (core/kernels/cpu/attention.h: kv
// is (b, s, g, 2, d), g = a in GPT-2); HF's c_attn columns are (3, a, d): all
// queries, then keys, then values, so q and kv share that one HF tensor.
// HF has no padded vocabulary rows: they are dropped on export and zero on import.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.h"
#include "core/model/full_params.h"
#include "core/results/output_files.h"

namespace ptdp {

// Where the elements of one ptdp tensor sit in its HF tensor.
enum class HfLayout : std::uint8_t {
  same,        // identical (biases, layernorms, positions: HF may hold more rows, ptdp takes the first s)
  transposed,  // ptdp (out, in) ↔ HF Conv1D (in, out)
  q_weight,    // ptdp (h, h) rows (a, d) ↔ HF c_attn (h, 3h) columns [0, h)
  kv_weight,   // ptdp (2h, h) rows (a, 2, d) ↔ HF c_attn (h, 3h) columns (2, a, d) from h
  q_bias,      // ptdp (h) ↔ HF c_attn.bias (3h) [0, h)
  kv_bias,     // ptdp (2h) as (a, 2, d) ↔ HF c_attn.bias (3h) from h as (2, a, d)
  vocab_rows,  // ptdp (V', h) ↔ HF (V, h): rows V.. of ptdp are padding
};

// One ptdp parameter and the HF tensor that holds it.
struct HfTensorMap {
  std::string ptdp, hf;  // "layers.0.q.weight", "h.0.attn.c_attn.weight" (without HF's "transformer.")
  Shape ptdp_shape, hf_shape;
  HfLayout layout = HfLayout::same;
};

// Every parameter of `model` with its HF tensor, in ptdp's order (embedding,
// layers, final layernorm). HF's wpe has `n_positions` ≥ s rows.
std::vector<HfTensorMap> hf_gpt2_layout(const Model& model, std::int64_t n_positions);
// The ptdp names and full shapes of a layout (what gather_full_params collects).
std::vector<ParamShape> ptdp_param_shapes(const std::vector<HfTensorMap>& layout);
// Offset in the HF tensor of element `i` (row-major) of the ptdp tensor, or -1
// for an element HF lacks (a padded vocabulary row). `head_dim` is d.
std::int64_t hf_offset(const HfTensorMap& m, std::int64_t head_dim, std::int64_t i);

// ptdp → HF: every tensor of the layout by HF name (padded rows dropped).
std::map<std::string, FullTensor> to_hf_gpt2(const FullParams& params, const Model& model);
// HF → ptdp (padded rows zero). Throws std::invalid_argument naming a tensor
// `hf` lacks or holds at another shape.
FullParams from_hf_gpt2(const std::map<std::string, FullTensor>& hf, const Model& model, std::int64_t n_positions);

// --- config.json (hf_gpt2_config.cpp) ---------------------------------------

// The GeLU ptdp computes, as transformers names it: the tanh form (core/kernels/cpu/gelu.cpp).
inline constexpr const char* kHfActivation = "gelu_new";
// config.json describing `model` (tied embeddings, n_positions = s, dropout as model.dropout).
nlohmann::json hf_gpt2_config(const Model& model);
// Every reason `config` (the contents of `file`) is not a GPT-2 of `model`'s
// shape that ptdp computes exactly; each error's field is "FILE: KEY".
ConfigErrors check_hf_gpt2_config(const nlohmann::json& config, const Model& model, const std::string& file);
// Every field of `model`'s block that GPT-2 does not have (grouped-query
// attention, RMSNorm, SwiGLU, RoPE, no biases, an untied output layer), each
// error's field "model.KEY", its message starting with `option`.
ConfigErrors hf_gpt2_block_problems(const Model& model, const std::string& option);
// config.json's n_positions (call after check_hf_gpt2_config found nothing).
std::int64_t hf_gpt2_positions(const nlohmann::json& config);

// --- folders (hf_gpt2_files.cpp) --------------------------------------------

inline constexpr const char* kHfConfigFile = "config.json";
inline constexpr const char* kHfWeightsFile = "model.safetensors";

// The full ptdp parameters of the HF GPT-2 in `dir`. Throws ConfigRefused with
// every problem (fields "DIR/config.json: n_embd", "DIR/model.safetensors: wte.weight").
FullParams read_hf_gpt2(const std::filesystem::path& dir, const Model& model);
// Stages `params` as DIR/config.json and DIR/model.safetensors (fp32, names
// with GPT2LMHeadModel's "transformer." prefix) in `out`, whose commit() puts
// them in place with its other files, all or none. Throws std::runtime_error naming the file.
void stage_hf_gpt2(OutputFiles& out, const std::filesystem::path& dir, const FullParams& params, const Model& model);

}  // namespace ptdp
