// Helpers of the config tests: a config's problems as one readable text.
#pragma once
#include <string>

#include "core/config/config.h"

namespace ptdp::test {

// "field: message" lines, one a problem: a failed expectation prints them all.
inline std::string errors_text(const ConfigErrors& errors) {
  std::string text;
  for (const auto& e : errors) text += e.field + ": " + e.message + "\n";
  return text;
}

}  // namespace ptdp::test
