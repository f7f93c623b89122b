// The outcome names and the exit statuses' meaning.
#include "core/process/outcome.h"

namespace ptdp {

std::string to_string(Outcome o) { return std::string(kOutcomeNames[static_cast<std::size_t>(o)]); }

Outcome outcome_from_string(std::string_view text) {
  for (std::size_t i = 0; i < kOutcomeNames.size(); ++i)
    if (kOutcomeNames[i] == text) return static_cast<Outcome>(i);
  return Outcome::failed;
}

bool is_failure(Outcome o) { return o == Outcome::failed || o == Outcome::timeout || o == Outcome::oom; }

Outcome outcome_of_exit(int code) {
  switch (code) {
    case kExitOk: return Outcome::ok;
    case kExitRefused: return Outcome::refused;
    case kExitOutOfMemory: return Outcome::oom;
    default: return Outcome::failed;
  }
}

}  // namespace ptdp
