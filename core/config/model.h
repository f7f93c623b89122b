// The GPT model description: sizes only, no weights.
#pragma once
#include <cstdint>

namespace ptdp {

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

  int ffn() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
  int head_dim() const { return heads > 0 ? hidden / heads : 0; }
  // V rounded up to a multiple of vocab_pad_to: the rows of the word embedding and
  // the logits' columns. The padded rows are real weights but never targets.
  // FLOP formulas keep the paper's V.
  int padded_vocab() const { return vocab_pad_to > 1 ? (vocab + vocab_pad_to - 1) / vocab_pad_to * vocab_pad_to : vocab; }
};

}  // namespace ptdp
