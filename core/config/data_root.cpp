// The run-time data folder (data_root.h).
#include "core/config/data_root.h"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>

namespace ptdp {

namespace {

// The folder of the running executable; empty where /proc is not mounted.
std::filesystem::path executable_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path{} : exe.parent_path();
}

}  // namespace

bool holds_data(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_directory(dir / "sweeps" / "machines", ec) &&
         std::filesystem::is_directory(dir / "report" / "reference", ec);
}

std::filesystem::path data_root() {
  if (const char* env = std::getenv("PTDP_DATA_DIR"); env != nullptr && *env != '\0') {
    const std::filesystem::path dir(env);
    if (!holds_data(dir))
      throw std::invalid_argument("PTDP_DATA_DIR: \"" + dir.string() +
                                  "\" holds no sweeps/machines/ and report/reference/ (a ptdp checkout's root does)");
    return dir;
  }
  // A build folder (build/endtoend/ptdp) or an unpacked pack (.gpupack/run/bin/ptdp) inside a checkout.
  std::filesystem::path dir = executable_dir();
  for (int up = 0; up < 4 && !dir.empty() && dir != dir.parent_path(); ++up, dir = dir.parent_path())
    if (holds_data(dir)) return dir;
  return PTDP_SOURCE_DIR;
}

}  // namespace ptdp
