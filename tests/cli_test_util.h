// Running the `ptdp` program from tests: a scratch folder, a config file, and
// the exit status with what it printed.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptdp::test {

struct Run {
  int status = -1;
  std::string out, err;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh folder under the system temp folder, removed at destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) {
    path_ = std::filesystem::temp_directory_path() / ("ptdp-test-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return path_ / name;
  }

 private:
  std::filesystem::path path_;
};

// Runs `command` (a shell command line) in `dir`, capturing stdout and stderr;
// on the profiles' peaks (PTDP_MEASURE_PEAK=0), so no figure depends on this machine's measured rate.
inline Run run_command(const std::string& command, const ScratchDir& dir) {
  const auto out = dir.path() / "stdout.txt", err = dir.path() / "stderr.txt";
  const std::string line = "cd '" + dir.path().string() + "' && OPENBLAS_NUM_THREADS=1 PTDP_MEASURE_PEAK=0 " + command + " > '" +
                           out.string() + "' 2> '" + err.string() + "'";
  const int raw = std::system(line.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

inline std::string ptdp_cli() { return PTDP_CLI; }

// Starts `command` (a shell command line) in `dir` without waiting; its output
// goes to `log` there. The shell execs the last command, so the pid is its.
inline pid_t start_command(const std::string& command, const ScratchDir& dir, const std::string& log) {
  const std::string line = "cd '" + dir.path().string() + "' && OPENBLAS_NUM_THREADS=1 exec " + command + " > '" +
                           log + "' 2>&1";
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Polls `done` every 20 ms for up to `seconds`; whether it became true.
inline bool wait_until(const std::function<bool()>& done, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The live processes (zombies left out) whose command line mentions `text`:
// whatever a test started under a folder of its own.
inline std::vector<pid_t> processes_mentioning(const std::string& text) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || std::stoi(name) == getpid()) continue;
    std::string cmdline = read_file(entry.path() / "cmdline"), stat = read_file(entry.path() / "stat");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    const auto close = stat.rfind(')');
    const bool zombie = close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
    if (!zombie && cmdline.find(text) != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}

// Seconds of wall time `f` took.
template <class F>
double seconds_of(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Inverts the bits of byte `at` of `file` (a corruption a checksum must see).
inline void flip_byte(const std::filesystem::path& file, std::uintmax_t at) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at));
  const int c = f.get();
  f.seekp(static_cast<std::streamoff>(at));
  f.put(static_cast<char>(~c));
}

inline nlohmann::json tiny_config_json() {
  return nlohmann::json::parse(R"({
    "model": {"layers": 2, "hidden": 64, "heads": 4, "seq_len": 16, "vocab": 128},
    "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 2, "global_batch": 8, "precision": "fp32"},
    "optimizer": {"lr": 0.003},
    "machine": "cpu-host"})");
}

// A sweep of the tiny model above on the CPU profile, measured: a 1-rank and a
// 2-rank point (p 2), three iterations after one warm-up.
inline nlohmann::json tiny_cpu_sweep_json(const std::string& name) {
  nlohmann::json s = nlohmann::json::parse(R"js({
    "schema": "ptdp.sweep/1", "reproduces": "test", "machine": "cpu-host", "mode": "measure",
    "points": [{}, {"plan.pp": 2}], "train": {"iterations": 3, "warmup": 1},
    "paper": {"label": "t{plan.tp} p{plan.pp} d{plan.dp}"}})js");
  s["name"] = name;
  s["base"] = tiny_config_json();
  s["base"].erase("machine");
  s["base"].erase("optimizer");
  return s;
}

}  // namespace ptdp::test
