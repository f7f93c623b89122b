// Durable writes through StagedFile, folder fsyncs and the filesystem's name.
#include "core/checkpoint/durable_file.h"

#include "core/io/staged_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace ptdp {

namespace {

[[noreturn]] void durable_fail(const std::string& what, const std::filesystem::path& path) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

}  // namespace

void fsync_path(const std::filesystem::path& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) durable_fail("cannot open", path);
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0) durable_fail("cannot fsync", path);
}

void write_durably(const std::filesystem::path& path, const std::string& bytes) {
  write_file_atomic(path, bytes, {.durable = true, .folder_no_follow = true});
}

FilesystemInfo filesystem_of(const std::filesystem::path& path) {
  std::error_code ec;
  const std::string p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec).string();
  std::ifstream mounts("/proc/self/mounts");
  std::string device, point, type, rest;
  FilesystemInfo best;
  while (mounts >> device >> point >> type && std::getline(mounts, rest)) {
    const bool contains = p == point || point == "/" ||
                          (p.rfind(point, 0) == 0 && p.size() > point.size() && p[point.size()] == '/');
    if (contains && point.size() >= best.mount_point.size()) best = {type, point};
  }
  return best;
}

}  // namespace ptdp
