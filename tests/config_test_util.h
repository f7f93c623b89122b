// Helpers of the config tests: a config's problems as one readable text.
#pragma once
#include <filesystem>
#include <initializer_list>
#include <string>

#include "core/config/config.h"

namespace ptdp::test {

inline std::filesystem::path machines_dir() {
  return std::filesystem::path(PTDP_SOURCE_DIR) / "sweeps" / "machines";
}

// The errors of reading (ConfigRefused) and validating `j` together.
inline ConfigErrors config_problems(const nlohmann::json& j, int world = 0) {
  try {
    return validate(config_from_json(j, machines_dir()), world);
  } catch (const ConfigRefused& e) {
    return e.errors();
  }
}

// True when some error names `field` and its message contains every word in `words`.
inline bool refused(const ConfigErrors& errors, const std::string& field,
                    std::initializer_list<std::string> words = {}) {
  for (const auto& e : errors) {
    if (e.field != field) continue;
    bool all = true;
    for (const auto& w : words) all = all && e.message.find(w) != std::string::npos;
    if (all) return true;
  }
  return false;
}

// "field: message" lines, one a problem: a failed expectation prints them all.
inline std::string errors_text(const ConfigErrors& errors) {
  std::string text;
  for (const auto& e : errors) text += e.field + ": " + e.message + "\n";
  return text;
}

}  // namespace ptdp::test
