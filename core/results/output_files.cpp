// Output files: the check that a path may be written, staged temporaries and
// the all-or-none rename.
#include "core/results/output_files.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ptdp {

namespace fs = std::filesystem;

namespace {

// "a symbolic link", "a folder", ...: what is at a path that is not a regular file.
const char* kind_of(fs::file_type t) {
  switch (t) {
    case fs::file_type::symlink: return "a symbolic link";
    case fs::file_type::directory: return "a folder";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::block:
    case fs::file_type::character: return "a device";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

// Why an existing entry at `path` may not be replaced, or "".
std::string not_replaceable(const fs::path& path) {
  std::error_code ec;
  const fs::file_status s = fs::symlink_status(path, ec);
  if (ec || !fs::exists(s) || fs::is_regular_file(s)) return "";
  return path.string() + " is " + kind_of(s.type()) + "; an output replaces only a regular file";
}

fs::path folder_of(const fs::path& path) { return path.parent_path().empty() ? fs::path(".") : path.parent_path(); }

// Creates `file` exclusively (never through a link); -1 with errno on failure.
int create_exclusive(const fs::path& file) {
  return ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
}

// Removes `.NAME.tmp.PID.N` beside `path` where no process PID lives: the
// temporaries of a command killed while writing (SIGKILL, or a signal with no
// handler) would otherwise stay forever. A live writer's temporary is kept.
void remove_stale_temporaries(const fs::path& path) {
  const std::string prefix = "." + path.filename().string() + ".tmp.";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder_of(path), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const std::string pid = rest.substr(0, rest.find('.'));
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(static_cast<pid_t>(std::stoi(pid)), 0) != 0 && errno == ESRCH) ::unlink(e.path().c_str());
  }
}

}  // namespace

std::string output_path_problem(const fs::path& path) {
  if (path.empty()) return "the output path is empty";
  if (std::string why = not_replaceable(path); !why.empty()) return why;
  fs::path folder = fs::absolute(folder_of(path));
  std::error_code ec;
  while (!fs::exists(fs::symlink_status(folder, ec)) && folder.has_relative_path()) folder = folder.parent_path();
  if (!fs::is_directory(folder, ec)) return folder.string() + " is not a folder, so " + path.string() + " cannot be written";
  const fs::path probe = folder / (".ptdp-probe." + std::to_string(::getpid()));
  const int fd = create_exclusive(probe);
  if (fd < 0) return "cannot create files in " + folder.string() + ": " + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

OutputFiles::~OutputFiles() = default;

void OutputFiles::discard() { staged_.clear(); }  // each StagedFile removes its temporary

void OutputFiles::add(const fs::path& path, const nlohmann::json& j, int indent) { add_text(path, j.dump(indent) + "\n"); }

void OutputFiles::add_text(const fs::path& path, const std::string& text, bool executable) {
  try {
    stage(path, {.executable = executable}).write(text);
  } catch (const std::exception& e) {
    discard();
    throw std::runtime_error(std::string("writing ") + path.string() + ": " + e.what());
  }
}

void OutputFiles::add_file(const fs::path& path, const Writer& write) {
  add_stream(path, [&](StagedFile& out) { write(out.temporary()); });
}

void OutputFiles::add_stream(const fs::path& path, const StreamWriter& write) {
  try {
    write(stage(path));
  } catch (const std::exception& e) {
    discard();
    throw std::runtime_error(std::string("writing ") + path.string() + ": " + e.what());
  }
}

StagedFile& OutputFiles::stage(const fs::path& path, StageOptions options) {
  for (const auto& s : staged_)
    if (fs::absolute(s->path()).lexically_normal() == fs::absolute(path).lexically_normal() || same_file(s->path(), path))
      throw std::runtime_error(path.string() + " is named twice");
  if (std::string why = not_replaceable(path); !why.empty()) throw std::runtime_error(why);
  fs::create_directories(folder_of(path));
  remove_stale_temporaries(path);
  staged_.push_back(std::make_unique<StagedFile>(path, options));
  return *staged_.back();
}

void OutputFiles::commit() {
  for (const auto& s : staged_)  // anything put in place since add(): refuse before replacing any
    if (std::string why = not_replaceable(s->path()); !why.empty()) {
      discard();
      throw std::runtime_error(why);
    }
  for (std::size_t i = 0; i < staged_.size(); ++i) {
    try {
      staged_[i]->commit();
    } catch (const std::exception& e) {
      for (std::size_t k = 0; k < i; ++k) ::unlink(staged_[k]->path().c_str());  // all or none
      discard();
      throw;
    }
  }
  staged_.clear();
}

void write_json_atomic(const fs::path& path, const nlohmann::json& j, int indent) {
  OutputFiles out;
  out.add(path, j, indent);
  out.commit();
}

}  // namespace ptdp
