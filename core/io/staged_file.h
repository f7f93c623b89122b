// The one way ptdp writes a file (docs/design.md, "Writing files"): the bytes
// go to a temporary created exclusively (O_CREAT|O_EXCL: a unique name, never
// through a link planted under it) in the destination folder, which is opened
// once and used by descriptor from then on; commit() renames the temporary
// over the path, so the path holds its old bytes or all the new ones. Durable
// files (checkpoints) are flushed to the device before the rename and the
// folder's entry after it. A StagedFile destroyed before commit() removes its
// temporary: nothing half-written is left behind.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>

namespace ptdp {

struct StageOptions {
  bool durable = false;  // fsync the file before the rename and the folder after it
  // Refuse a destination folder that is a symbolic link: for folders ptdp
  // makes and owns (a checkpoint's iter_NNNNNNN), where a planted link would
  // redirect the write. A folder the user names may be a link.
  bool folder_no_follow = false;
  bool executable = false;  // created 0777 before the umask (a script), else 0666
};

class StagedFile {
 public:
  // Creates the temporary beside `path` (the folder must exist). Throws
  // std::runtime_error naming the path: the folder cannot be opened (or is a
  // link under folder_no_follow), or no temporary can be created there.
  explicit StagedFile(std::filesystem::path path, StageOptions options = {});
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;
  ~StagedFile();

  // Appends bytes to the temporary; throws naming the path (a full disk).
  void write(const void* data, std::size_t bytes);
  void write(const std::string& bytes) { write(bytes.data(), bytes.size()); }
  // Puts the file in place (see above); throws naming the path, leaving the old file.
  void commit();

  const std::filesystem::path& path() const { return path_; }
  // The temporary's path, for messages and for readers of what was written.
  std::filesystem::path temporary() const { return path_.parent_path() / tmp_name_; }

 private:
  std::filesystem::path path_;
  StageOptions options_;
  int folder_fd_ = -1, fd_ = -1;
  std::string tmp_name_;
  bool committed_ = false;
};

// `bytes` written to `path` through a StagedFile and committed.
void write_file_atomic(const std::filesystem::path& path, const std::string& bytes, StageOptions options = {});

// Whether two paths name the same file (device and inode, links followed);
// false when either does not exist. Outputs are never an input of the same command.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace ptdp
