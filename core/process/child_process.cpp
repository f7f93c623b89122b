// fork/exec into a new session, non-blocking wait, ending a session.
#include "core/process/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace ptdp {

namespace {

// In the forked child, before exec: a session of its own (so that interrupts
// of the runner's terminal reach the runner only, which then ends the child),
// SIGTERM when the runner dies, the log as stdout and stderr.
[[noreturn]] void exec_child(std::vector<char*>& args, const std::filesystem::path& log, pid_t runner) {
  setsid();
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != runner) _exit(128 + SIGTERM);  // the runner died before prctl
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);  // never through a planted link
  if (fd >= 0) dup2(fd, STDOUT_FILENO), dup2(fd, STDERR_FILENO), close(fd);
  execvp(args[0], args.data());
  _exit(127);
}

// The session of process `pid` from /proc/PID/stat (fields after the
// parenthesised name: state, ppid, pgrp, session), or -1.
pid_t session_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  char state = 0;
  long ppid = 0, pgrp = 0, session = -1;
  if (std::sscanf(stat.c_str() + close + 1, " %c %ld %ld %ld", &state, &ppid, &pgrp, &session) != 4) return -1;
  return static_cast<pid_t>(session);
}

// Sends `sig` to every process of session `sid` but this one; returns how many.
int signal_session(pid_t sid, int sig) {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid != getpid() && session_of(pid) == sid && ::kill(pid, sig) == 0) ++n;
  }
  return n;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log)
    : started_(std::chrono::steady_clock::now()) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t runner = getpid();
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed for " + argv.front());
  if (pid_ == 0) exec_child(args, log, runner);
}

ChildProcess::~ChildProcess() {
  if (!done_) stop();
}

bool ChildProcess::poll(int& exit_code) {
  if (done_) return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
  done_ = true;
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return true;
}

void ChildProcess::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return;
  int code = 0;
  if (!done_) ::kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!poll(code) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  signal_session(pid_, SIGKILL);  // what did not end, the ranks mpirun left included
  if (!done_) {
    int status = 0;
    waitpid(pid_, &status, 0);
    done_ = true;
  }
}

double ChildProcess::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

}  // namespace ptdp
