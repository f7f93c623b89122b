// Files that survive a crash whole or not at all: written under a temporary
// name, flushed to the device (fsync), renamed into place, and the folder's
// entry flushed too (fsync of the directory), so after a power loss or a kill
// a path holds either its old bytes or its new ones, never a prefix.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ptdp {

// `path` + ".tmp": where a durable write stages its bytes (loaders ignore it).
std::filesystem::path staging_path(const std::filesystem::path& path);

// Flushes a file's (or a folder's) bytes to the device. Throws std::runtime_error naming it.
void fsync_path(const std::filesystem::path& path, bool directory = false);

// fsync(tmp), rename(tmp, path), fsync(path's folder). Throws naming the path.
void commit_staged(const std::filesystem::path& tmp, const std::filesystem::path& path);

// Writes `bytes` to `path` durably through a StagedFile (core/io/staged_file.h),
// refusing a folder that is a symbolic link.
void write_durably(const std::filesystem::path& path, const std::string& bytes);

// The whole file. Throws std::runtime_error naming it when it cannot be read.
std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& path);

// The filesystem `path` lives on: the longest mount point of /proc/self/mounts
// that contains it, and its type as the kernel names it ("ext4", "xfs",
// "tmpfs", "nfs", "lustre", "overlay", ...; "unknown" when none matches).
struct FilesystemInfo {
  std::string type = "unknown", mount_point;
};
FilesystemInfo filesystem_of(const std::filesystem::path& path);
inline std::string filesystem_type(const std::filesystem::path& path) { return filesystem_of(path).type; }

}  // namespace ptdp
