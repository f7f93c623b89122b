// How a result was obtained, the "mode" of every result, sweep record and
// comparison row: the enum and its names, written once (as core/process/outcome.h
// writes the outcomes').
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ptdp {

// measured: `ptdp train`; projected: `ptdp project` and sweeps; slice: one
// stage of a larger configuration measured on one device (`ptdp slice`).
enum class ResultMode : std::uint8_t { measured, projected, slice };

inline constexpr std::array<std::string_view, 3> kResultModeNames = {"measured", "projected", "slice"};
static_assert(kResultModeNames.size() == static_cast<std::size_t>(ResultMode::slice) + 1, "a name for every mode");

// The mode's name (a NUL-terminated literal, for printf's %s too).
constexpr const char* to_string(ResultMode m) { return kResultModeNames[static_cast<std::size_t>(m)].data(); }

// The mode named `text`, or nothing for a word that names none.
inline std::optional<ResultMode> parse_result_mode(const std::string& text) {
  for (std::size_t i = 0; i < kResultModeNames.size(); ++i)
    if (text == kResultModeNames[i]) return static_cast<ResultMode>(i);
  return std::nullopt;
}

}  // namespace ptdp
