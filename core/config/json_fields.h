// Strict reading of one JSON object into struct fields: each missing field,
// wrong type and unknown key becomes a ConfigError naming its path
// ("plan.tp"), and reading goes on so every problem is reported at once.
// read_fields reads a whole struct by its field table (core/config/field.h).
#pragma once
#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.h"
#include "core/config/field.h"

namespace ptdp {

class JsonFields {
 public:
  // `path` is the object's own name ("plan"); errors go to `errors`.
  JsonFields(const nlohmann::json& object, std::string path, ConfigErrors& errors);

  // The value under `key` into `out`: int, std::int64_t, std::uint64_t, double,
  // bool, std::string, std::vector<int>, std::map<std::string, double or
  // std::string>. False (and why recorded) when it is missing but required, or
  // invalid; `out` then keeps its value.
  template <class T>
  bool read(std::string_view key, T& out, bool required);

  // An enum spelled as one of `names`: `index` is the position of the spelling
  // read. `field.refused` is a known spelling refused with `field.refused_why`.
  bool read_spelling(const Field& field, std::span<const std::string_view> names, std::size_t& index);

  // The object under `key`, marked as known; nullptr when absent (error if required) or not an object.
  const nlohmann::json* object(std::string_view key, bool required);

  // The value under `key` of any type, marked as known; nullptr when absent.
  const nlohmann::json* value(std::string_view key) { return find(key, false); }

  // A reader of `object` named `path`, recording into this one's errors.
  JsonFields nested(const nlohmann::json& object, std::string path) const { return {object, std::move(path), errors_}; }

  // Records every key that no reader asked for.
  void reject_unknown();

  std::string field(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  void error(const std::string& field, const std::string& message,
             ConfigErrorKind kind = ConfigErrorKind::rule);

 private:
  const nlohmann::json* find(std::string_view key, bool required);

  const nlohmann::json& object_;
  std::string path_;
  ConfigErrors& errors_;
  std::set<std::string, std::less<>> known_;
  bool is_object_;
};

template <HasFields S>
void read_fields(JsonFields& f, S& s);

// One field of a table into `out`: an enum by name, a struct (or an optional
// one, null meaning absent) by its own table, a map of structs by theirs with
// `field.keys` its only keys, anything else by JsonFields::read.
template <class T>
void read_field(JsonFields& f, const Field& field, T& out) {
  const auto read_object = [&f](const nlohmann::json& object, std::string path, auto& into) {
    JsonFields inner = f.nested(object, std::move(path));
    read_fields(inner, into);
    inner.reject_unknown();
  };
  if constexpr (SpelledEnum<T>) {
    std::size_t index = 0;
    if (f.read_spelling(field, spellings(out), index)) out = static_cast<T>(index);
  } else if constexpr (HasFields<T>) {
    if (const nlohmann::json* object = f.object(field.key, field.required))
      read_object(*object, f.field(field.key), out);
  } else if constexpr (kIsOptional<T>) {
    const nlohmann::json* value = f.value(field.key);
    if (value == nullptr || value->is_null()) return;
    const nlohmann::json* object = f.object(field.key, false);
    if (object == nullptr) return;
    typename T::value_type inner;
    read_object(*object, f.field(field.key), inner);
    out = inner;
  } else if constexpr (kIsStructMap<T>) {
    const nlohmann::json* object = f.object(field.key, field.required);
    if (object == nullptr) return;
    for (const auto& entry : object->items()) {
      const std::string key = entry.key(), at = f.field(field.key) + "." + key;
      if (!field.keys.empty() && std::ranges::none_of(field.keys, [&](const KeyName& k) { return k.name == key; })) {
        std::string known;
        for (const KeyName& k : field.keys) known += (known.empty() ? "" : ", ") + std::string(k.name);
        f.error(at, at + " is not " + std::string(field.keys_are) + "; known: " + known,
                ConfigErrorKind::unknown_field);
        continue;
      }
      typename T::mapped_type value{};
      read_object(entry.value(), at, value);
      out[key] = value;
    }
  } else {
    f.read(field.key, out, field.required);
  }
}

// Reads every field of `s`'s table from `f`'s object, in the table's order.
// Keys the table does not name stay unknown (reject_unknown refuses them).
template <HasFields S>
void read_fields(JsonFields& f, S& s) {
  visit_fields(s, [&f](const Field& field, auto& value) { read_field(f, field, value); });
}

}  // namespace ptdp
