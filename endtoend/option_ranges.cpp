// Range checks of numeric options (option_ranges.h), reading values strictly (core/config/number_text.h).
#include "endtoend/option_ranges.h"

#include <sstream>

#include "core/config/json_read.h"
#include "core/config/number_text.h"

namespace ptdp::cli {

namespace {

template <class T>
std::string range_text(T lowest, T highest) {
  std::ostringstream s;
  s << "[" << lowest << ", " << highest << "]";
  return s.str();
}

}  // namespace

CLI::Validator integer_in(std::int64_t lowest, std::int64_t highest) {
  const std::string range = range_text(lowest, highest);
  return CLI::Validator(
      [lowest, highest, range](std::string& text) {
        const std::optional<std::int64_t> n = read_integer(text);
        if (n && *n >= lowest && *n <= highest) return std::string();
        return cut_text(text, 40) + " is not an integer in " + range;
      },
      range);
}

CLI::Validator number_in(double lowest, double highest) {
  const std::string range = range_text(lowest, highest);
  return CLI::Validator(
      [lowest, highest, range](std::string& text) {
        const std::optional<double> x = read_number(text);
        if (x && *x >= lowest && *x <= highest) return std::string();
        return cut_text(text, 40) + " is not a number in " + range;
      },
      range);
}

}  // namespace ptdp::cli
