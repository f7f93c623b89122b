// What the fuzz targets share: the fuzzer's bytes as text, and a scratch file
// for the readers that take only a path (the sweep reader, a resumed sweep's
// results). Nothing is written inside the repository.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace ptdp::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// <temp>/ptdp-fuzz-<pid>-<stem>.json holding `text` while this lives: named by
// the process id, so parallel fuzzer jobs (-jobs, -fork) never share one.
class ScratchFile {
 public:
  ScratchFile(const std::string& stem, const std::string& text)
      : path_(std::filesystem::temp_directory_path() /
              ("ptdp-fuzz-" + std::to_string(::getpid()) + "-" + stem + ".json")) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
  }
  ~ScratchFile() {
    std::error_code ec;  // a destructor must not throw; a stale file is rewritten next time
    std::filesystem::remove(path_, ec);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ptdp::fuzz
