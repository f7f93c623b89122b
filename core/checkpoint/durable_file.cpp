// Durable writes (fsync, rename, fsync of the folder) and the filesystem's name.
#include "core/checkpoint/durable_file.h"

#include "core/io/staged_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace ptdp {

namespace {

[[noreturn]] void durable_fail(const std::string& what, const std::filesystem::path& path) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

}  // namespace

std::filesystem::path staging_path(const std::filesystem::path& path) { return path.string() + ".tmp"; }

void fsync_path(const std::filesystem::path& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) durable_fail("cannot open", path);
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0) durable_fail("cannot fsync", path);
}

void commit_staged(const std::filesystem::path& tmp, const std::filesystem::path& path) {
  fsync_path(tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) durable_fail("cannot rename into", path);
  const std::filesystem::path dir = path.parent_path().empty() ? "." : path.parent_path();
  fsync_path(dir, true);
}

void write_durably(const std::filesystem::path& path, const std::string& bytes) {
  write_file_atomic(path, bytes, {.durable = true, .folder_no_follow = true});
}

std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) durable_fail("cannot open", path);
  std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) durable_fail("cannot read", path);
  return bytes;
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
