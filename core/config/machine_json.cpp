// Machine profiles read from JSON, strictly (unknown keys are errors), by the
// field tables of machine.h.
#include <algorithm>
#include <cctype>

#include "core/config/config.h"
#include "core/config/json_fields.h"
#include "core/config/json_read.h"

namespace ptdp {

using nlohmann::json;

std::span<const std::string_view> spellings(Device) {
  static const std::string names[] = {device_name(Device::cpu), device_name(Device::cuda)};
  static const std::string_view views[] = {names[0], names[1]};
  return views;
}

double Machine::peak_for(const std::string& precision) const {
  auto it = peak_tflops.find(precision);
  return it == peak_tflops.end() ? 0.0 : it->second;
}

std::string file_name_problem(const std::string& name) {
  const bool safe = !name.empty() && name.size() <= kMaxFileName && name.front() != '.' &&
                    std::all_of(name.begin(), name.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
                    });
  return safe ? "" : "must be a file name of letters, digits, '_', '-' and '.', not starting with '.', 1 to " +
                         std::to_string(kMaxFileName) + " characters (got " + std::to_string(name.size()) + ": " +
                         json_excerpt(name) + ")";
}

Machine machine_from_json(const json& j, const std::string& where) {
  ConfigErrors errors;
  Machine m;
  JsonFields f(j, where, errors);
  read_fields(f, m);
  f.reject_unknown();
  if (errors.empty()) errors = validate(m, where);
  if (!errors.empty()) throw ConfigRefused(std::move(errors));
  return m;
}

}  // namespace ptdp
