// The model description: sizes and block architecture only, no weights. The
// defaults are the paper's GPT block; the architecture fields describe a
// Llama-style block (grouped-query attention, RMSNorm, SwiGLU, RoPE, no
// biases, an untied output layer).
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "core/config/bounds.h"
#include "core/config/field.h"

namespace ptdp {

enum class Norm { layernorm, rmsnorm };
enum class Activation { gelu, swiglu };
enum class Position { learned, rope };

// Each field's JSON key, bound and meaning: visit_fields below.
struct Model {
  int layers = 0;      // l
  int hidden = 0;      // h
  int heads = 0;       // a (head dim h/a)
  int seq_len = 0;     // s
  int vocab = 0;       // V
  int ffn_hidden = 0;  // f; 0 in a file: 4·h (config_from_json resolves it)
  double dropout = 0;
  int vocab_pad_to = 128;
  int kv_heads = 0;    // g; 0 in a file: a (config_from_json resolves it)
  Norm norm = Norm::layernorm;
  Activation activation = Activation::gelu;
  Position position = Position::learned;
  double rope_theta = 10000;
  bool bias = true;
  bool tied_embeddings = true;

  int kv() const { return kv_heads > 0 ? kv_heads : heads; }

  // 4·h computed in 64 bits: validate() bounds h, but this is also asked of configs it refuses.
  int ffn() const { return ffn_hidden > 0 ? ffn_hidden : clamp_int(4 * std::int64_t{hidden}); }
  int head_dim() const { return heads > 0 ? hidden / heads : 0; }
  // V rounded up to a multiple of vocab_pad_to: the rows of the word embedding and
  // the logits' columns. The padded rows are real weights but never targets.
  // FLOP formulas keep the paper's V.
  int padded_vocab() const {
    if (vocab_pad_to <= 1) return vocab;
    const std::int64_t pad = vocab_pad_to;
    return clamp_int((vocab + pad - 1) / pad * pad);
  }
};

// The field table of "model" (core/config/field.h), in reading order.
template <FieldsOf<Model> M, class Visit>
void visit_fields(M& m, Visit&& v) {
  v({.key = "layers", .description = "l: transformer layers", .bound = count(), .required = true}, m.layers);
  v({.key = "hidden", .description = "h: hidden size", .bound = count(), .required = true}, m.hidden);
  v({.key = "heads", .description = "a: attention heads (head dimension h/a)", .bound = count(), .required = true},
    m.heads);
  v({.key = "seq_len", .description = "s: sequence length in tokens", .bound = count(), .required = true}, m.seq_len);
  v({.key = "vocab", .description = "V: vocabulary size", .bound = count(), .required = true}, m.vocab);
  v({.key = "ffn_hidden", .description = "f: the MLP's inner width (of either activation)",
     .bound = count(kMaxSize, "4·hidden")}, m.ffn_hidden);
  v({.key = "dropout", .description = "attention and hidden dropout probability (the paper's GPT: 0.1); "
                                      "costed and held in memory by the projection, `ptdp train` runs without",
     .bound = interval(0, false, 1, true)}, m.dropout);
  v({.key = "vocab_pad_to", .description = "the embedding and the LM head hold V rounded up to a multiple of this "
                                           "(Megatron's make-vocab-size-divisible-by); 1: no padding",
     .bound = count()}, m.vocab_pad_to);
  v({.key = "kv_heads", .description = "g: key/value heads (grouped-query attention)",
     .bound = count(kMaxSize, "heads")}, m.kv_heads);
  v({.key = "norm", .description = "the blocks' normalization"}, m.norm);
  v({.key = "activation", .description = "MLP activation; swiglu: silu(x·Wgᵀ) ∘ (x·Wuᵀ), three MLP matrices"},
    m.activation);
  v({.key = "position", .description = "position encoding; rope: rotary embedding of q and k (rotate-half pairs)"},
    m.position);
  v({.key = "rope_theta", .description = "RoPE base: frequency i of a head is theta^(-2i/d)",
     .bound = interval(0, true, 1e12, false), .when = "position is \"rope\"", .applies = m.position == Position::rope},
    m.rope_theta);
  v({.key = "bias", .description = "biases of the linear layers (the norms keep theirs)"}, m.bias);
  v({.key = "tied_embeddings", .description = "the output layer reuses the word embedding"}, m.tied_embeddings);
}

inline constexpr std::string_view kNormNames[] = {"layernorm", "rmsnorm"};
inline constexpr std::string_view kActivationNames[] = {"gelu", "swiglu"};
inline constexpr std::string_view kPositionNames[] = {"learned", "rope"};
inline std::span<const std::string_view> spellings(Norm) { return kNormNames; }
inline std::span<const std::string_view> spellings(Activation) { return kActivationNames; }
inline std::span<const std::string_view> spellings(Position) { return kPositionNames; }

inline std::string to_string(Norm n) { return spelling(n); }
inline std::string to_string(Activation a) { return spelling(a); }
inline std::string to_string(Position p) { return spelling(p); }

}  // namespace ptdp
