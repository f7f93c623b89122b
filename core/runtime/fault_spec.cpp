// --fault specs read part by part, each part checked (fault_spec.h).
#include "core/runtime/fault_spec.h"

#include <array>
#include <vector>

#include "core/config/json_read.h"
#include "core/config/number_text.h"

namespace ptdp {

namespace {

constexpr std::array<Fault::Kind, 6> kKinds = {Fault::Kind::kill, Fault::Kind::hang, Fault::Kind::oom,
                                               Fault::Kind::alloc, Fault::Kind::nan, Fault::Kind::slow};

std::vector<std::string> split_at_colons(const std::string& text) {
  std::vector<std::string> parts(1);
  for (const char c : text) {
    if (c == ':') parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

// A part as messages show it: quoted, control characters escaped, cut short.
std::string shown(const std::string& text) { return json_excerpt(nlohmann::json(text)); }

// The integer `part` in [0, count), else a refusal naming what it is ("rank") and its range
// ("the rank "5" is not an integer from 0 to 1 (the job's 2 ranks)").
int index_in(const std::string& part, const char* what, int count, const char* of_what) {
  const std::optional<std::int64_t> n = read_integer(part);
  if (!n || *n < 0 || *n >= count)
    throw FaultRefused(std::string("the ") + what + " " + shown(part) + " is not an integer from 0 to " +
                       std::to_string(count - 1) + " (" + of_what + " " + std::to_string(count) + " " + what +
                       (count == 1 ? "" : "s") + ")");
  return static_cast<int>(*n);
}

Fault::Kind kind_of(const std::string& part) {
  for (const Fault::Kind k : kKinds)
    if (part == fault_kind_name(k)) return k;
  throw FaultRefused("the kind " + shown(part) + " is not kill, hang, oom, alloc, nan or slow");
}

double slowdown_of(const std::string& part) {
  const std::optional<double> x = read_number(part);
  if (!x || !(*x > 1) || *x > kMaxFaultSlowdown)
    throw FaultRefused("the factor " + shown(part) + " is not a number in (1, " +
                       std::to_string(static_cast<int>(kMaxFaultSlowdown)) + "]");
  return *x;
}

}  // namespace

const char* fault_kind_name(Fault::Kind kind) {
  static constexpr const char* kName[] = {"kill", "hang", "oom", "alloc", "nan", "slow"};  // Fault::Kind order
  return kName[static_cast<int>(kind)];
}

Fault parse_fault(const std::string& text, int ranks, int iterations) {
  const std::vector<std::string> parts = split_at_colons(text);
  if (parts.size() != 3)
    throw FaultRefused("is not KIND:RANK:ITERATION (KIND kill, hang, oom, alloc or nan) nor slow:RANK:FACTOR");
  Fault f;
  f.kind = kind_of(parts[0]);
  f.rank = index_in(parts[1], "rank", ranks, "the job's");
  if (f.kind == Fault::Kind::slow) f.factor = slowdown_of(parts[2]);
  else f.iteration = index_in(parts[2], "iteration", iterations, "the run's");
  if (f.kind == Fault::Kind::hang && ranks < 2)
    throw FaultRefused("the kind hang needs a job of 2 ranks or more: the others' --comm-timeout ends the job, "
                       "and a single rank that stops answering would never end");
  return f;
}

}  // namespace ptdp
