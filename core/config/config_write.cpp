// Configs out to JSON by their field tables: the resolved values, echoed into
// every result. (nlohmann::json keeps an object's keys sorted, so the written
// order does not depend on the tables'.)
#include "core/config/config.h"

namespace ptdp {

using nlohmann::json;

namespace {

template <class T>
json value_json(const T& value);

// Nothing to echo: a count <= 0, an empty list or map.
template <class T>
bool holds_nothing(const T& value) {
  if constexpr (std::is_arithmetic_v<T>) return value <= 0;
  else if constexpr (requires { value.empty(); }) return value.empty();
  else return false;
}

template <HasFields S>
json write_fields(const S& s) {
  json j = json::object();
  visit_fields(s, [&j](const Field& field, const auto& value) {
    if (field.written == Written::never || (field.written == Written::unless_empty && holds_nothing(value))) return;
    j[std::string(field.key)] = value_json(value);
  });
  return j;
}

// An enum by name, a struct by its table, an absent optional as null, a map of
// structs member by member; numbers, strings, lists and plain maps as they are.
template <class T>
json value_json(const T& value) {
  if constexpr (SpelledEnum<T>) {
    return spelling(value);
  } else if constexpr (HasFields<T>) {
    return write_fields(value);
  } else if constexpr (kIsOptional<T>) {
    return value ? value_json(*value) : json(nullptr);
  } else if constexpr (kIsStructMap<T>) {
    json j = json::object();
    for (const auto& [key, item] : value) j[key] = value_json(item);
    return j;
  } else {
    return value;
  }
}

}  // namespace

json to_json(const Model& m) {
  Model resolved = m;  // 0 in a file stands for these; a result echoes what ran
  resolved.ffn_hidden = m.ffn();
  resolved.kv_heads = m.kv();
  return write_fields(resolved);
}

json to_json(const Plan& p) { return write_fields(p); }
json to_json(const Machine& m) { return write_fields(m); }
json to_json(const std::optional<Filesystem>& fs) { return value_json(fs); }
json to_json(const OptimizerConfig& o) { return write_fields(o); }

json to_json(const Config& c) {
  return {{"model", to_json(c.model)},
          {"plan", to_json(c.plan)},
          {"machine", to_json(c.machine)},
          {"optimizer", to_json(c.optimizer)}};
}

}  // namespace ptdp
