// Output files of a command (JSON, or any file through a writer): only a
// regular file (or a new path) is ever written, each through a StagedFile
// (core/io/staged_file.h: an exclusive temporary beside it, then a rename),
// and the outputs of one command are committed together or none is left.
#pragma once
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/staged_file.h"

namespace ptdp {

// Why `path` cannot be an output, or "" when it can: it exists and is not a
// regular file (a symbolic link, FIFO, device or folder is never replaced), or
// no file can be created in its folder (or the nearest existing one above it).
// Probes by creating and removing a file, so it holds for root too.
std::string output_path_problem(const std::filesystem::path& path);

// Several JSON outputs written together. add() writes each to a temporary file
// beside its path at once (so a full disk shows before anything is replaced);
// commit() renames them all into place. A failure, or destruction without
// commit(), leaves no temporary (and add() removes those of dead processes), and a commit that fails part-way removes the
// outputs it had renamed: all or none.
class OutputFiles {
 public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  ~OutputFiles();

  // Throws std::runtime_error naming the path (nothing of this set is kept then).
  void add(const std::filesystem::path& path, const nlohmann::json& j, int indent = 2);
  // A text file (JUnit XML, Markdown; a script when `executable`) as it is.
  void add_text(const std::filesystem::path& path, const std::string& text, bool executable = false);
  // Any other file: `write` fills the (new, exclusively created) temporary path it is given, or throws.
  using Writer = std::function<void(const std::filesystem::path& tmp)>;
  void add_file(const std::filesystem::path& path, const Writer& write);
  // A file `write` streams into its StagedFile (large binary files, never reopened by name).
  using StreamWriter = std::function<void(StagedFile& out)>;
  void add_stream(const std::filesystem::path& path, const StreamWriter& write);
  void commit();

 private:
  StagedFile& stage(const std::filesystem::path& path, StageOptions options = {});
  void discard();
  std::vector<std::unique_ptr<StagedFile>> staged_;
};

// One output: an OutputFiles of one file.
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& j, int indent = 2);

}  // namespace ptdp
