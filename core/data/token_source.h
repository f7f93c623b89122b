// Token sources: sample i of a run is a pure function of (seed, i), so every
// parallel layout trains on exactly the same sequences. A sample holds s+1
// tokens: inputs are the first s, targets the last s (next-token prediction).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace ptdp {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // Writes seq_len + 1 tokens of sample `index` to out.
  virtual void sample(std::int64_t index, int seq_len, std::int32_t* out) const = 0;
  // Smallest vocabulary the tokens fit in.
  virtual int vocab() const = 0;
  virtual std::string describe() const = 0;
};

// Synthetic stream with learnable structure: each next token is π(previous)
// with probability 0.8 (π a fixed permutation drawn from the seed), otherwise
// uniform. A model that learns π reaches a loss near
// −0.8·ln(0.8) + 0.2·ln(V/0.2) ≈ 1.47 nats for V = 128, down from ln V ≈ 4.85.
std::unique_ptr<TokenSource> make_synthetic_source(int vocab, std::uint64_t seed);

// A text file as byte-level tokens (vocabulary 256); sample i is a window at an
// offset drawn from (seed, i). Throws std::runtime_error, its message starting
// "--data: ", if the file cannot be read, is not a regular file (a device such
// as /dev/zero, a FIFO, a folder: refused, never read until memory runs out)
// or is shorter than seq_len + 1 bytes.
std::unique_ptr<TokenSource> make_text_source(const std::filesystem::path& file, int seq_len,
                                              std::uint64_t seed);

// Why make_text_source would refuse `file` (its message without "--data: ";
// "" when it would not), from the file's kind and size alone: what commands
// check before any work.
std::string text_source_problem(const std::filesystem::path& file, int seq_len);

}  // namespace ptdp
