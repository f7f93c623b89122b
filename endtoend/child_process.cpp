// fork/exec with a process group, non-blocking wait, group kill.
#include "endtoend/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

namespace ptdp::cli {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log)
    : started_(std::chrono::steady_clock::now()) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed for " + argv.front());
  if (pid_ == 0) {
    setpgid(0, 0);  // its own group, so a timeout kills mpirun and every rank
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, STDOUT_FILENO), dup2(fd, STDERR_FILENO), close(fd);
    execvp(args[0], args.data());
    _exit(127);
  }
  setpgid(pid_, pid_);
}

ChildProcess::~ChildProcess() {
  if (!done_) {
    kill_group();
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

bool ChildProcess::poll(int& exit_code) {
  if (done_) return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
  done_ = true;
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return true;
}

void ChildProcess::kill_group() {
  if (pid_ > 0 && !done_) ::kill(-pid_, SIGKILL);
}

double ChildProcess::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

}  // namespace ptdp::cli
