// Whole regular files read by descriptor (read_file.h).
#include "core/io/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ptdp {

namespace {

// What a file that is not a regular one is, for messages.
std::string not_regular(const std::filesystem::path& path, mode_t mode) {
  const char* kind = S_ISDIR(mode)                    ? "a folder"
                     : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
                     : S_ISFIFO(mode)                 ? "a FIFO"
                     : S_ISSOCK(mode)                 ? "a socket"
                                                      : "not a file";
  return path.string() + " is " + kind + ", not a regular file";
}

[[noreturn]] void read_refused(const std::filesystem::path& path, const std::string& what, int err) {
  throw std::runtime_error(path.string() + " " + what + ": " + std::strerror(err));
}

// Closes the descriptor however the read ends.
struct OpenForRead {
  int fd;
  ~OpenForRead() { ::close(fd); }
};

}  // namespace

std::string regular_file_problem(const std::filesystem::path& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return path.string() + " cannot be read: " + std::strerror(errno);
  return S_ISREG(st.st_mode) ? "" : not_regular(path, st.st_mode);
}

std::vector<std::uint8_t> read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer before it is refused.
  const OpenForRead in{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (in.fd < 0) read_refused(path, "cannot be opened", errno);
  struct stat st{};
  if (::fstat(in.fd, &st) != 0) read_refused(path, "cannot be read", errno);
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(not_regular(path, st.st_mode));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    throw std::runtime_error(path.string() + " holds " + std::to_string(size) + " bytes, more than the " +
                             std::to_string(max_bytes) + " it may");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::read(in.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_refused(path, "cannot be read", errno);
    if (n == 0) throw std::runtime_error(path.string() + " became shorter while it was read");
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

}  // namespace ptdp
