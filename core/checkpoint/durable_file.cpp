// Durable writes (fsync, rename, fsync of the folder) and the filesystem's name.
#include "core/checkpoint/durable_file.h"

#include <fcntl.h>
#include <sys/vfs.h>
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
  const std::filesystem::path tmp = staging_path(path);
  try {
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      out.flush();
      if (!out) durable_fail("cannot write", tmp);
    }
    commit_staged(tmp, path);
  } catch (...) {  // nothing half-written left behind
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) durable_fail("cannot open", path);
  std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) durable_fail("cannot read", path);
  return bytes;
}

std::string filesystem_type(const std::filesystem::path& path) {
  struct statfs st {};
  if (::statfs(path.c_str(), &st) != 0) return "unknown";
  struct Known {
    unsigned long magic;
    const char* name;
  };
  // Magic numbers of <linux/magic.h> (and Lustre's, GPFS's, BeeGFS's), spelled out to need no kernel headers.
  static constexpr Known kKnown[] = {
      {0xEF53, "ext4"},       {0x58465342, "xfs"},     {0x01021994, "tmpfs"},   {0x6969, "nfs"},
      {0x0BD00BD0, "lustre"}, {0x794C7630, "overlay"}, {0x9123683E, "btrfs"},   {0x47504653, "gpfs"},
      {0x19830326, "beegfs"}, {0x65735546, "fuse"},    {0x2FC12FC1, "zfs"},     {0x00C36400, "ceph"},
      {0x5346544E, "ntfs"},   {0x4D44, "vfat"},        {0x858458F6, "ramfs"},   {0xFF534D42, "cifs"}};
  const auto magic = static_cast<unsigned long>(st.f_type) & 0xFFFFFFFFul;
  for (const Known& k : kKnown)
    if (k.magic == magic) return k.name;
  char hex[32];
  std::snprintf(hex, sizeof hex, "unknown (0x%lx)", magic);
  return hex;
}

}  // namespace ptdp
