// Replaying tests/corpus (its README says what each folder holds): every file
// of a reader's folder refused with the piece of message expected of it; a
// file without an expected message, or a message without its file, fails.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>

namespace ptdp::test {

inline std::filesystem::path corpus_dir() { return std::filesystem::path(PTDP_SOURCE_DIR) / "tests" / "corpus"; }

// The *.json files directly in `dir`, by name.
inline std::set<std::string> corpus_files(const std::filesystem::path& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") out.insert(e.path().filename().string());
  return out;
}

// A reader as a test replays it: the message it refuses a file with, "" when it accepts the file.
using CorpusRefusal = std::function<std::string(const std::filesystem::path&)>;

// Every file of corpus/NAME through its reader, for each NAME of `readers`;
// `expected` holds "NAME/file.json" -> a piece of the message.
inline void replay_corpus(const std::map<std::string, CorpusRefusal>& readers,
                          const std::map<std::string, std::string>& expected) {
  int replayed = 0;
  for (const auto& [name, refusal] : readers)
    for (const auto& file : corpus_files(corpus_dir() / name)) {
      const std::string key = name + "/" + file;
      const auto want = expected.find(key);
      if (want == expected.end()) {
        ADD_FAILURE() << key << " has no expected message in this test";
        continue;
      }
      const std::string got = refusal(corpus_dir() / name / file);
      EXPECT_NE(got, "") << key << " was accepted";
      EXPECT_NE(got.find(want->second), std::string::npos) << key << " refused with:\n" << got;
      ++replayed;
    }
  EXPECT_EQ(replayed, static_cast<int>(expected.size())) << "an expected message names a file the corpus lacks";
}

}  // namespace ptdp::test
