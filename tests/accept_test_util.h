// Machine profiles for `ptdp accept` tests: the shipped cpu-host profile with
// its acceptance bands changed, written into a test's scratch folder.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_test_util.h"

namespace ptdp::test {

inline nlohmann::json cpu_host_profile() {
  return nlohmann::json::parse(read_file(std::string(PTDP_SOURCE_DIR) + "/sweeps/machines/cpu-host.json"));
}

// `profile` as <name>.json in `dir`, under that name; returns the file.
inline std::filesystem::path write_profile(const ScratchDir& dir, const std::string& name, nlohmann::json profile) {
  profile["name"] = name;
  return dir.write(name + ".json", profile.dump(2));
}

}  // namespace ptdp::test
