// Numbers written as text by a person (a command-line option's value, a part
// of --fault's spec), read strictly: the whole text, in base 10, with no white
// space, no '+', nothing that wraps around, and no NaN or infinity, so that
// "-1", "4294967297" or "1e999" never become a value nobody typed.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace ptdp {

// The integer `text` spells ("-3", "42"), or nothing (not an integer, or beyond 64 bits).
std::optional<std::int64_t> read_integer(std::string_view text);

// The finite number `text` spells ("0.5", "2", "1e3"), or nothing (not a number, NaN, infinite, or beyond a double).
std::optional<double> read_number(std::string_view text);

}  // namespace ptdp
