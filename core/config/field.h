// A row of a configuration struct's field table: the JSON key, what validate()
// requires of the value, and one line of documentation. Each struct lists its
// rows once, in a visit_fields(S&, visit) beside its definition (model.h,
// plan.h, machine.h, acceptance_band.h, config.h). The reader (json_fields.h),
// the writer (config_write.cpp), validate()'s bounds and the generated
// docs/config-fields.md and fuzz/ptdp.dict section all walk those rows, so a
// new field is one member and one row.
#pragma once
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/config/bounds.h"

namespace ptdp {

// What validate() requires of a numeric field.
struct Bound {
  enum class Kind : std::uint8_t { none, count, interval };
  Kind kind = Kind::none;
  std::int64_t max = 0;     // count: an integer in [1, max] ...
  std::string_view zero{};  // ... or 0, when this says what 0 stands for ("4·hidden"); "" refuses 0
  double lo = 0, hi = 0;    // interval: a finite number from lo to hi, each end open or closed
  bool lo_open = false, hi_open = false;
};

// A positive integer of at most `max`; a `zero` text also allows 0 and says what it stands for.
constexpr Bound count(std::int64_t max = kMaxSize, std::string_view zero = {}) {
  return {.kind = Bound::Kind::count, .max = max, .zero = zero};
}
// A finite number in the interval from lo to hi, each end open or closed.
constexpr Bound interval(double lo, bool lo_open, double hi, bool hi_open) {
  return {.kind = Bound::Kind::interval, .lo = lo, .hi = hi, .lo_open = lo_open, .hi_open = hi_open};
}

// A key a map field may hold, and what its value means.
struct KeyName {
  std::string_view name{}, meaning{};
};

// When the writer puts a field into JSON.
enum class Written : std::uint8_t {
  always,
  unless_empty,  // left out when it holds nothing: a count <= 0, an empty list or map
  never,         // read only (a profile's acceptance bands are not echoed into results)
};

struct Field {
  std::string_view key{};          // the JSON key
  std::string_view description{};  // one line for docs/config-fields.md
  Bound bound{};                   // what validate() requires (numbers; a map's every value)
  bool required = false;           // refused when absent; else the struct's default stands
  Written written = Written::always;
  std::string_view when{};         // the bound applies only under this condition (in words) ...
  bool applies = true;             // ... which holds for the value being validated
  std::string_view refused{};      // an enum spelling that is known but refused ("fp8") ...
  std::string_view refused_why{};  // ... and why, after the value: "is out of scope for now: ..."
  std::span<const KeyName> keys{};  // a map's only keys (empty: any) ...
  std::string_view keys_are{};      // ... and what they are, for refusing another
};

// `M` is `S` or `const S`: one table serves the reader and the writer.
template <class M, class S>
concept FieldsOf = std::same_as<std::remove_const_t<M>, S>;

// A struct with a field table: visit_fields(s, visit) calls visit(row, member) per row.
struct AnyRowVisit {
  template <class T>
  void operator()(const Field&, T&) const {}
};
template <class T>
concept HasFields = requires(T& t, AnyRowVisit visit) { visit_fields(t, visit); };

// An enum spelled in JSON by name: spellings(E) lists the names in value order.
template <class E>
concept SpelledEnum = std::is_enum_v<E> && requires(E e) {
  { spellings(e) } -> std::convertible_to<std::span<const std::string_view>>;
};

// The kinds of field beside numbers, strings, booleans and enums: a std::optional
// (absent or null in JSON), a map ("peak_tflops") and a map of structs ("acceptance").
template <class T>
inline constexpr bool kIsOptional = false;
template <class T>
inline constexpr bool kIsOptional<std::optional<T>> = true;
template <class T>
inline constexpr bool kIsMap = requires { typename T::mapped_type; };
template <class T>
inline constexpr bool kIsStructMap = requires { requires HasFields<typename T::mapped_type>; };

// The name of `value`, "?" for a value outside its list.
template <SpelledEnum E>
std::string spelling(E value) {
  const std::span<const std::string_view> names = spellings(value);
  const auto i = static_cast<std::size_t>(value);
  return i < names.size() ? std::string(names[i]) : "?";
}

}  // namespace ptdp
