// Token sources: sample i is a pure function of (seed, i) and carries structure.
// A text file that holds no sample (empty, too short) or is no regular file
// (a device such as /dev/zero, a FIFO, a folder) is refused at once, never
// read until memory runs out or a writer comes (core/io/read_file.h).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>

#include "core/data/token_source.h"
#include "core/io/read_file.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

std::vector<std::int32_t> sample(const TokenSource& src, std::int64_t i, int s = 32) {
  std::vector<std::int32_t> out(static_cast<std::size_t>(s) + 1);
  src.sample(i, s, out.data());
  return out;
}

TEST(Data, SyntheticSampleIsAPureFunctionOfSeedAndIndex) {
  auto a = make_synthetic_source(128, 5), b = make_synthetic_source(128, 5), c = make_synthetic_source(128, 6);
  EXPECT_EQ(sample(*a, 17), sample(*b, 17));
  EXPECT_EQ(sample(*a, 17), sample(*a, 17));
  EXPECT_NE(sample(*a, 17), sample(*a, 18));
  EXPECT_NE(sample(*a, 17), sample(*c, 17));
}

TEST(Data, SyntheticTokensAreInRangeAndMostlyFollowOnePermutation) {
  auto src = make_synthetic_source(64, 1);
  std::map<std::pair<int, int>, int> pairs;
  int total = 0;
  for (std::int64_t i = 0; i < 200; ++i) {
    const auto s = sample(*src, i);
    for (std::size_t k = 0; k < s.size(); ++k) {
      ASSERT_GE(s[k], 0);
      ASSERT_LT(s[k], 64);
      if (k > 0) ++pairs[{s[k - 1], s[k]}], ++total;
    }
  }
  // For each previous token, its most frequent successor holds ≈ 80% + 20%/64 of transitions.
  std::map<int, int> best, count;
  for (const auto& [pair, n] : pairs) {
    best[pair.first] = std::max(best[pair.first], n);
    count[pair.first] += n;
  }
  int followed = 0;
  for (const auto& [prev, n] : best) followed += n;
  EXPECT_NEAR(static_cast<double>(followed) / total, 0.8 + 0.2 / 64, 0.03);
}

// The message make_text_source throws for `file` ("" when it reads it).
std::string text_refusal(const std::filesystem::path& file, int seq_len) {
  try {
    (void)make_text_source(file, seq_len, 1);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(Data, TextFilesWithoutASampleOrThatAreNoFilesAreRefused) {
  test::ScratchDir dir("data-refused");
  const auto empty = dir.write("empty.txt", ""), short_file = dir.write("short.txt", "0123456789");
  const auto fine = dir.write("fine.txt", "01234567890");
  const std::filesystem::path fifo = dir.path() / "data.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::map<std::filesystem::path, std::string> cases = {
      {empty, empty.string() + " has 0 bytes, fewer than model.seq_len + 1 = 11"},
      {short_file, short_file.string() + " has 10 bytes, fewer than model.seq_len + 1 = 11"},
      {"/dev/zero", "/dev/zero is a device, not a regular file"},
      {fifo, fifo.string() + " is a FIFO, not a regular file"},
      {dir.path(), dir.path().string() + " is a folder, not a regular file"},
      {dir.path() / "absent.txt", "absent.txt cannot be"}};
  for (const auto& [file, words] : cases) {
    const std::string checked = text_source_problem(file, 10), read = text_refusal(file, 10);
    EXPECT_NE(checked.find(words), std::string::npos) << checked;
    EXPECT_NE(read.find("--data: "), std::string::npos) << read;
    EXPECT_NE(read.find(words), std::string::npos) << read;
  }
  EXPECT_EQ(text_source_problem(fine, 10), "");
  EXPECT_EQ(text_refusal(fine, 10), "");
  EXPECT_EQ(sample(*make_text_source(fine, 10, 1), 0, 10).size(), 11u);
}

TEST(Data, AWholeFileIsReadUpToItsLimit) {
  test::ScratchDir dir("data-read");
  const auto file = dir.write("eight.bin", "01234567");
  EXPECT_EQ(read_regular_file(file).size(), 8u);
  EXPECT_EQ(read_regular_file(file, 8).size(), 8u);
  try {
    (void)read_regular_file(file, 7);
    ADD_FAILURE() << "a file larger than the limit was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string() + " holds 8 bytes, more than the 7 it may"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)read_regular_file("/dev/zero"), std::runtime_error);
}

}  // namespace
}  // namespace ptdp
