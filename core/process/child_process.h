// A child process of a step runner (step_runner.h): started in a session of its
// own with its output in a log file, polled without blocking, and ended with
// everything it started (mpirun and its ranks) at its time limit, on interrupt,
// or when the runner itself dies.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace ptdp {

class ChildProcess {
 public:
  // Starts argv[0] (searched in PATH) with stdout and stderr to `log`, as the
  // leader of a new session. It gets SIGTERM should this process die first
  // (SIGKILL included), which ends a step and makes mpirun end its ranks.
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log);
  ~ChildProcess();  // stop() unless it ended
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // True once the child ended; `exit_code` is its status, or 128 + signal.
  bool poll(int& exit_code);
  // Ends the child and its session: SIGTERM to its process group (mpirun
  // passes it to its ranks and exits), up to `grace` to end, then SIGKILL to
  // every process left in the session (Open MPI puts each rank in a process
  // group of its own, so a group kill alone would leave them behind).
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));
  double seconds() const;

 private:
  pid_t pid_ = -1;
  bool done_ = false;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace ptdp
