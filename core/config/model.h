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

  int ffn() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
  int head_dim() const { return heads > 0 ? hidden / heads : 0; }
};

}  // namespace ptdp
