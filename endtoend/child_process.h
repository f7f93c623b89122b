// A child process of the sweep runner: started with its own process group and
// its output in a log file, polled without blocking, killed with its whole
// group (mpirun and its ranks) on timeout.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace ptdp::cli {

class ChildProcess {
 public:
  // Starts argv[0] (searched in PATH) with stdout and stderr to `log`.
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // True once the child ended; `exit_code` is its status, or 128 + signal.
  bool poll(int& exit_code);
  void kill_group();
  double seconds() const;

 private:
  pid_t pid_ = -1;
  bool done_ = false;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace ptdp::cli
