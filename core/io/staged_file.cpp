// Staged, exclusive, optionally durable file writes (staged_file.h).
#include "core/io/staged_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>

namespace ptdp {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what, const fs::path& path, int err) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(err));
}

// A name no one can predict: .NAME.tmp.PID.RANDOM (O_EXCL refuses a clash anyway).
std::string temporary_name(const fs::path& path) {
  std::random_device rd;
  const unsigned long long r = (static_cast<unsigned long long>(rd()) << 32) ^ rd();
  return "." + path.filename().string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(r);
}

}  // namespace

StagedFile::StagedFile(fs::path path, StageOptions options) : path_(std::move(path)), options_(options) {
  if (path_.filename().empty()) throw std::runtime_error("cannot write " + path_.string() + ": it names no file");
  const fs::path folder = path_.parent_path().empty() ? fs::path(".") : path_.parent_path();
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (options_.folder_no_follow ? O_NOFOLLOW : 0);
  folder_fd_ = ::open(folder.c_str(), flags);
  if (folder_fd_ < 0)
    fail(errno == ELOOP || errno == ENOTDIR ? "refusing to write through a symbolic link or non-folder"
                                            : "cannot open the folder of",
         path_, errno);
  for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
    tmp_name_ = temporary_name(path_);
    fd_ = ::openat(folder_fd_, tmp_name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   options_.executable ? 0777 : 0666);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) {
    const int err = errno;
    ::close(folder_fd_);
    fail("cannot create a temporary file beside", path_, err);
  }
}

StagedFile::~StagedFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && folder_fd_ >= 0) ::unlinkat(folder_fd_, tmp_name_.c_str(), 0);
  if (folder_fd_ >= 0) ::close(folder_fd_);
}

void StagedFile::write(const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write", path_, n < 0 ? errno : ENOSPC);
    p += n, bytes -= static_cast<std::size_t>(n);
  }
}

void StagedFile::commit() {
  if (options_.durable && ::fsync(fd_) != 0) fail("cannot fsync", path_, errno);
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) fail("cannot write", path_, errno);
  // An entry that is not a regular file (a link, FIFO, folder) is never replaced.
  struct stat st{};
  if (::fstatat(folder_fd_, path_.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
    throw std::runtime_error(path_.string() + " is not a regular file; an output replaces only a regular file");
  if (::renameat(folder_fd_, tmp_name_.c_str(), folder_fd_, path_.filename().c_str()) != 0)
    fail("cannot rename into", path_, errno);
  committed_ = true;
  if (options_.durable && ::fsync(folder_fd_) != 0) fail("cannot fsync the folder of", path_, errno);
}

void write_file_atomic(const fs::path& path, const std::string& bytes, StageOptions options) {
  StagedFile f(path, options);
  f.write(bytes);
  f.commit();
}

bool same_file(const fs::path& a, const fs::path& b) {
  struct stat sa{}, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace ptdp
