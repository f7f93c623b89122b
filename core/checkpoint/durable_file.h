// Files that survive a crash whole or not at all: written through a StagedFile
// (core/io/staged_file.h: an exclusive, unpredictable temporary, flushed to the
// device, renamed into place, the folder's entry flushed too), so after a
// power loss or a kill a path holds either its old bytes or its new ones,
// never a prefix. And the name of the filesystem a checkpoint lands on.
#pragma once
#include <filesystem>
#include <string>

namespace ptdp {

// Flushes a file's (or a folder's) bytes to the device. Throws std::runtime_error naming it.
void fsync_path(const std::filesystem::path& path, bool directory = false);

// Writes `bytes` to `path` durably through a StagedFile, refusing a folder
// that is a symbolic link (a checkpoint's iter_NNNNNNN: ptdp makes it).
void write_durably(const std::filesystem::path& path, const std::string& bytes);

// The filesystem `path` lives on: the longest mount point of /proc/self/mounts
// that contains it, and its type as the kernel names it ("ext4", "xfs",
// "tmpfs", "nfs", "lustre", "overlay", ...; "unknown" when none matches).
struct FilesystemInfo {
  std::string type = "unknown", mount_point;
};
FilesystemInfo filesystem_of(const std::filesystem::path& path);
inline std::string filesystem_type(const std::filesystem::path& path) { return filesystem_of(path).type; }

}  // namespace ptdp
