// Synthetic and byte-level text token sources.
#include "core/data/token_source.h"

#include <numeric>
#include <stdexcept>

#include "core/io/read_file.h"

namespace ptdp {

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class SyntheticSource final : public TokenSource {
 public:
  SyntheticSource(int vocab, std::uint64_t seed) : vocab_(vocab), seed_(seed), next_(static_cast<std::size_t>(vocab)) {
    std::iota(next_.begin(), next_.end(), 0);
    for (std::size_t i = next_.size(); i > 1; --i)  // Fisher-Yates from the seed
      std::swap(next_[i - 1], next_[mix(seed ^ (0xA5A5ull + i)) % i]);
  }
  void sample(std::int64_t index, int seq_len, std::int32_t* out) const override {
    std::uint64_t state = mix(seed_ * 0x100000001B3ull ^ static_cast<std::uint64_t>(index));
    const auto draw = [&] { return state = mix(state); };
    const auto v = static_cast<std::uint64_t>(vocab_);
    out[0] = static_cast<std::int32_t>(draw() % v);
    for (int k = 1; k <= seq_len; ++k) {
      const bool follow = draw() % 10 < 8;
      out[k] = follow ? next_[static_cast<std::size_t>(out[k - 1])] : static_cast<std::int32_t>(draw() % v);
    }
  }
  int vocab() const override { return vocab_; }
  std::string describe() const override { return "synthetic (permutation chain, p=0.8)"; }

 private:
  int vocab_;
  std::uint64_t seed_;
  std::vector<std::int32_t> next_;  // π
};

class TextSource final : public TokenSource {
 public:
  TextSource(std::vector<unsigned char> bytes, std::string name, std::uint64_t seed)
      : bytes_(std::move(bytes)), name_(std::move(name)), seed_(seed) {}
  void sample(std::int64_t index, int seq_len, std::int32_t* out) const override {
    const auto windows = static_cast<std::uint64_t>(bytes_.size()) - static_cast<std::uint64_t>(seq_len);
    const std::size_t start = mix(seed_ ^ mix(static_cast<std::uint64_t>(index))) % windows;
    for (int k = 0; k <= seq_len; ++k) out[k] = bytes_[start + static_cast<std::size_t>(k)];
  }
  int vocab() const override { return 256; }
  std::string describe() const override { return "bytes of " + name_; }

 private:
  std::vector<unsigned char> bytes_;
  std::string name_;
  std::uint64_t seed_;
};

// Why `bytes` bytes of `file` hold no sample of seq_len + 1 tokens, or "".
std::string too_short_for(const std::filesystem::path& file, std::uintmax_t bytes, int seq_len) {
  if (bytes >= static_cast<std::uintmax_t>(seq_len) + 1) return "";
  return file.string() + " has " + std::to_string(bytes) + " bytes, fewer than model.seq_len + 1 = " +
         std::to_string(seq_len + 1);
}

}  // namespace

std::unique_ptr<TokenSource> make_synthetic_source(int vocab, std::uint64_t seed) {
  return std::make_unique<SyntheticSource>(vocab, seed);
}

std::unique_ptr<TokenSource> make_text_source(const std::filesystem::path& file, int seq_len, std::uint64_t seed) {
  std::vector<std::uint8_t> bytes;
  try {
    bytes = read_regular_file(file);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("--data: ") + e.what());
  }
  if (std::string why = too_short_for(file, bytes.size(), seq_len); !why.empty())
    throw std::runtime_error("--data: " + why);
  return std::make_unique<TextSource>(std::move(bytes), file.filename().string(), seed);
}

std::string text_source_problem(const std::filesystem::path& file, int seq_len) {
  if (std::string why = regular_file_problem(file); !why.empty()) return why;
  std::error_code ec;
  const std::uintmax_t bytes = std::filesystem::file_size(file, ec);
  if (ec) return file.string() + " cannot be read: " + ec.message();
  return too_short_for(file, bytes, seq_len);
}

}  // namespace ptdp
