// The name and element mapping between ptdp's full parameters and HF GPT-2's
// tensors; see hf_gpt2.h. One offset function serves both directions, so an
// export followed by an import gives back every element HF holds.
#include "core/checkpoint/hf_gpt2.h"

#include <stdexcept>

namespace ptdp {

namespace {

// The HF tensors of decoder layer `i`, and ptdp's.
void add_hf_layer(std::vector<HfTensorMap>& out, int i, std::int64_t h, std::int64_t f) {
  const std::string p = "layers." + std::to_string(i) + ".", q = "h." + std::to_string(i) + ".";
  const auto add = [&](const char* ours, const char* theirs, Shape shape, Shape hf_shape, HfLayout how) {
    out.push_back({p + ours, q + theirs, std::move(shape), std::move(hf_shape), how});
  };
  add("ln1.weight", "ln_1.weight", {h}, {h}, HfLayout::same);
  add("ln1.bias", "ln_1.bias", {h}, {h}, HfLayout::same);
  add("q.weight", "attn.c_attn.weight", {h, h}, {h, 3 * h}, HfLayout::q_weight);
  add("q.bias", "attn.c_attn.bias", {h}, {3 * h}, HfLayout::q_bias);
  add("kv.weight", "attn.c_attn.weight", {2 * h, h}, {h, 3 * h}, HfLayout::kv_weight);
  add("kv.bias", "attn.c_attn.bias", {2 * h}, {3 * h}, HfLayout::kv_bias);
  add("proj.weight", "attn.c_proj.weight", {h, h}, {h, h}, HfLayout::transposed);
  add("proj.bias", "attn.c_proj.bias", {h}, {h}, HfLayout::same);
  add("ln2.weight", "ln_2.weight", {h}, {h}, HfLayout::same);
  add("ln2.bias", "ln_2.bias", {h}, {h}, HfLayout::same);
  add("fc1.weight", "mlp.c_fc.weight", {f, h}, {h, f}, HfLayout::transposed);
  add("fc1.bias", "mlp.c_fc.bias", {f}, {f}, HfLayout::same);
  add("fc2.weight", "mlp.c_proj.weight", {h, f}, {f, h}, HfLayout::transposed);
  add("fc2.bias", "mlp.c_proj.bias", {h}, {h}, HfLayout::same);
}

// Row r of ptdp's q, (head, e), is column r of HF's c_attn; row r of its kv,
// (head, j, e) with j 0 for k and 1 for v, is column (1 + j)·h + head·d + e.
std::int64_t c_attn_column(bool kv, std::int64_t r, std::int64_t head_dim, std::int64_t h) {
  if (!kv) return r;
  const std::int64_t head = r / (2 * head_dim), j = (r / head_dim) % 2, e = r % head_dim;
  return (1 + j) * h + head * head_dim + e;
}

const FullTensor& find_mapped_tensor(const std::map<std::string, FullTensor>& from, const std::string& name,
                              const Shape& shape, const char* side) {
  const auto it = from.find(name);
  if (it == from.end()) throw std::invalid_argument(std::string(side) + " has no tensor " + name);
  if (it->second.shape != shape)
    throw std::invalid_argument(std::string(side) + " tensor " + name + " is " + shape_string(it->second.shape) +
                                ", expected " + shape_string(shape));
  return it->second;
}

}  // namespace

std::vector<HfTensorMap> hf_gpt2_layout(const Model& model, std::int64_t n_positions) {
  const std::int64_t h = model.hidden, f = model.ffn();
  std::vector<HfTensorMap> out;
  out.push_back({"embedding.wte", "wte.weight", {model.padded_vocab(), h}, {model.vocab, h}, HfLayout::vocab_rows});
  out.push_back({"embedding.wpe", "wpe.weight", {model.seq_len, h}, {n_positions, h}, HfLayout::same});
  for (int i = 0; i < model.layers; ++i) add_hf_layer(out, i, h, f);
  out.push_back({"final_ln.weight", "ln_f.weight", {h}, {h}, HfLayout::same});
  out.push_back({"final_ln.bias", "ln_f.bias", {h}, {h}, HfLayout::same});
  return out;
}

std::vector<ParamShape> ptdp_param_shapes(const std::vector<HfTensorMap>& layout) {
  std::vector<ParamShape> out;
  for (const HfTensorMap& m : layout) out.push_back({m.ptdp, m.ptdp_shape});
  return out;
}

std::int64_t hf_offset(const HfTensorMap& m, std::int64_t head_dim, std::int64_t i) {
  switch (m.layout) {
    case HfLayout::same: return i;  // positions: ptdp's s rows are HF's first s
    case HfLayout::vocab_rows: return i / m.ptdp_shape[1] < m.hf_shape[0] ? i : -1;
    case HfLayout::transposed: {  // ptdp (out, in) element (o, k) is HF (in, out) element (k, o)
      const std::int64_t out = m.ptdp_shape[0], in = m.ptdp_shape[1];
      return (i % in) * out + i / in;
    }
    case HfLayout::q_weight:
    case HfLayout::kv_weight: {  // ptdp (h or 2h, h) element (r, k) is HF (h, 3h) element (k, column of r)
      const std::int64_t h = m.ptdp_shape[1];
      return (i % h) * 3 * h + c_attn_column(m.layout == HfLayout::kv_weight, i / h, head_dim, h);
    }
    case HfLayout::q_bias:
    case HfLayout::kv_bias: return c_attn_column(m.layout == HfLayout::kv_bias, i, head_dim, m.hf_shape[0] / 3);
  }
  return -1;
}

std::map<std::string, FullTensor> to_hf_gpt2(const FullParams& params, const Model& model) {
  std::map<std::string, FullTensor> out;
  for (const HfTensorMap& m : hf_gpt2_layout(model, model.seq_len)) {
    const FullTensor& src = find_mapped_tensor(params, m.ptdp, m.ptdp_shape, "ptdp's weights");
    FullTensor& dst = out[m.hf];  // c_attn: q's columns, then kv's
    if (dst.values.empty()) {
      dst.shape = m.hf_shape;
      dst.values.assign(static_cast<std::size_t>(shape_numel(m.hf_shape)), 0.0f);
    }
    for (std::size_t i = 0; i < src.values.size(); ++i)
      if (const std::int64_t o = hf_offset(m, model.head_dim(), static_cast<std::int64_t>(i)); o >= 0)
        dst.values[static_cast<std::size_t>(o)] = src.values[i];
  }
  return out;
}

FullParams from_hf_gpt2(const std::map<std::string, FullTensor>& hf, const Model& model, std::int64_t n_positions) {
  FullParams out;
  for (const HfTensorMap& m : hf_gpt2_layout(model, n_positions)) {
    const FullTensor& src = find_mapped_tensor(hf, m.hf, m.hf_shape, "the Hugging Face model");
    FullTensor& dst = out[m.ptdp];
    dst.shape = m.ptdp_shape;
    dst.values.assign(static_cast<std::size_t>(shape_numel(m.ptdp_shape)), 0.0f);  // padded rows stay zero
    for (std::size_t i = 0; i < dst.values.size(); ++i)
      if (const std::int64_t o = hf_offset(m, model.head_dim(), static_cast<std::int64_t>(i)); o >= 0)
        dst.values[i] = src.values[static_cast<std::size_t>(o)];
  }
  return out;
}

}  // namespace ptdp
