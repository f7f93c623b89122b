// The schedule table, filled by each schedule file's static registration.
#include "core/schedule/registry.h"

#include <limits>
#include <map>
#include <stdexcept>

namespace ptdp {

namespace {
std::map<std::string, ScheduleInfo>& table() {
  static std::map<std::string, ScheduleInfo> schedules;  // constant after static initialisation
  return schedules;
}
}  // namespace

ScheduleRegistration::ScheduleRegistration(ScheduleInfo info) {
  const std::string name = info.name;
  table().emplace(name, std::move(info));
}

const ScheduleInfo* find_schedule(const std::string& name) {
  auto it = table().find(name);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> schedule_names() {
  std::vector<std::string> names;
  for (const auto& [name, info] : table()) names.push_back(name);
  return names;
}

Program build_program(const std::string& schedule, const ScheduleSpec& spec) {
  const ScheduleInfo* info = find_schedule(schedule);
  if (info == nullptr) throw std::invalid_argument("unknown schedule \"" + schedule + "\"");
  Program prog = info->build(spec);
  append_step(prog, spec);
  return prog;
}

}  // namespace ptdp

namespace ptdp {

std::vector<Program> build_pipeline(const std::string& schedule, int p, int m, int v) {
  std::vector<Program> programs;
  for (int r = 0; r < p; ++r) programs.push_back(build_program(schedule, {p, m, v, r}));
  return programs;
}

std::int64_t pipeline_instruction_bound(std::int64_t p, std::int64_t m, std::int64_t v) {
  const long double n = static_cast<long double>(p) * (6.0L * static_cast<long double>(m) * static_cast<long double>(v) + 3);
  const auto most = std::numeric_limits<std::int64_t>::max();
  return n >= static_cast<long double>(most) ? most : static_cast<std::int64_t>(n);
}

}  // namespace ptdp
