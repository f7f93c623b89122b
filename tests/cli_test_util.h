// Running the `ptdp` program from tests: a scratch folder, a config file, and
// the exit status with what it printed.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

// Runs `command` (a shell command line) in `dir`, capturing stdout and stderr.
inline Run run_command(const std::string& command, const ScratchDir& dir) {
  const auto out = dir.path() / "stdout.txt", err = dir.path() / "stderr.txt";
  const std::string line = "cd '" + dir.path().string() + "' && OPENBLAS_NUM_THREADS=1 " + command + " > '" +
                           out.string() + "' 2> '" + err.string() + "'";
  const int raw = std::system(line.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

inline std::string ptdp_cli() { return PTDP_CLI; }

// Seconds of wall time `f` took.
template <class F>
double seconds_of(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline nlohmann::json tiny_config_json() {
  return nlohmann::json::parse(R"({
    "model": {"layers": 2, "hidden": 64, "heads": 4, "seq_len": 16, "vocab": 128},
    "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 2, "global_batch": 8, "precision": "fp32"},
    "optimizer": {"lr": 0.003},
    "machine": "cpu-host"})");
}

}  // namespace ptdp::test
