// The model description: sizes and block architecture only, no weights. The
// defaults are the paper's GPT block; the architecture fields describe a
// Llama-style block (grouped-query attention, RMSNorm, SwiGLU, RoPE, no
// biases, an untied output layer).
#pragma once
#include <cstdint>
#include <string>

#include "core/config/bounds.h"

namespace ptdp {

enum class Norm { layernorm, rmsnorm };
enum class Activation { gelu, swiglu };  // swiglu: silu(x·Wgᵀ) ∘ (x·Wuᵀ), three MLP matrices
enum class Position { learned, rope };   // rope: rotary embedding of q and k (rotate-half pairs)

struct Model {
  int layers = 0;      // l: transformer layers
  int hidden = 0;      // h: hidden size
  int heads = 0;       // a: attention heads (head dim h/a)
  int seq_len = 0;     // s: sequence length in tokens
  int vocab = 0;       // V: vocabulary size
  int ffn_hidden = 0;  // MLP inner size; 0 in a file means the paper's 4·h
  double dropout = 0;  // attention and hidden dropout probability (the paper's GPT: 0.1).
                       // Costed and held in memory by the projection; `ptdp train` runs without.
  int vocab_pad_to = 128;  // the embedding and LM head hold V rounded up to a multiple of this
                           // (Megatron's make-vocab-size-divisible-by); 1: no padding
  int kv_heads = 0;        // g: key/value heads (grouped-query attention); 0 in a file means heads
  Norm norm = Norm::layernorm;
  Activation activation = Activation::gelu;  // ffn_hidden is the inner width f of either
  Position position = Position::learned;
  double rope_theta = 10000;   // RoPE base: frequency i of a head is theta^(-2i/d)
  bool bias = true;            // biases of the linear layers (the norms keep theirs)
  bool tied_embeddings = true;  // the output layer reuses the word embedding

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

std::string to_string(Norm n);
std::string to_string(Activation a);
std::string to_string(Position p);

}  // namespace ptdp
