// A sweep point's result against its "expect" bands (docs/results-format.md):
// the verdict and its names, written once, for the sweep runner that records
// it and the commands that read records back.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ptdp {

// none: the point has no bands (JSON null); pass: every banded metric within
// its bounds; fail: one outside, missing, or the point did not run ok.
enum class Acceptance : std::uint8_t { none, pass, fail };

inline constexpr std::array<std::string_view, 3> kAcceptanceNames = {"none", "pass", "fail"};
static_assert(kAcceptanceNames.size() == static_cast<std::size_t>(Acceptance::fail) + 1, "a name for every verdict");

constexpr std::string_view to_string(Acceptance a) { return kAcceptanceNames[static_cast<std::size_t>(a)]; }

}  // namespace ptdp
