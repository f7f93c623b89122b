// Strict field reader: types, ranges, missing and unknown keys, all reported.
#include "core/config/json_fields.h"

#include <algorithm>

#include "core/config/json_read.h"

namespace ptdp {

using nlohmann::json;

JsonFields::JsonFields(const json& object, std::string path, ConfigErrors& errors)
    : object_(object), path_(std::move(path)), errors_(errors), is_object_(object.is_object()) {
  if (!is_object_) error(path_.empty() ? "(top level)" : path_, (path_.empty() ? "the config" : path_) +
                                                                  " must be a JSON object", ConfigErrorKind::type);
}

void JsonFields::error(const std::string& field_name, const std::string& message, ConfigErrorKind kind) {
  errors_.push_back({field_name, message, kind});
}

const json* JsonFields::find(std::string_view key, bool required) {
  known_.emplace(key);
  if (!is_object_) return nullptr;
  auto it = object_.find(std::string(key));
  if (it == object_.end()) {
    if (required) error(field(key), field(key) + " is missing", ConfigErrorKind::missing);
    return nullptr;
  }
  return &*it;
}

namespace {

std::string convert(const json& v, auto& out) { return json_convert(v, out); }
template <class V>
std::string convert(const json& v, std::map<std::string, V>& out) {
  if (!v.is_object()) return "must be an object";
  std::map<std::string, V> result;
  for (const auto& [k, item] : v.items()) {
    V value{};
    auto why = convert(item, value);
    if (!why.empty()) return "entry \"" + k + "\" " + why;
    result[k] = value;
  }
  out = std::move(result);
  return "";
}
std::string convert(const json& v, std::vector<int>& out) {
  if (!v.is_array()) return "must be a list of integers";
  std::vector<int> result;
  for (std::size_t i = 0; i < v.size(); ++i) {
    int value = 0;
    auto why = convert(v[i], value);
    if (!why.empty()) return "entry " + std::to_string(i) + " " + why;
    result.push_back(value);
  }
  out = std::move(result);
  return "";
}

}  // namespace

template <class T>
bool JsonFields::read(std::string_view key, T& out, bool required) {
  const json* v = find(key, required);
  if (v == nullptr) return !required;
  auto why = convert(*v, out);
  if (why.empty()) return true;
  error(field(key), field(key) + " " + why + " (got " + json_excerpt(*v) + ")", ConfigErrorKind::type);
  return false;
}

template bool JsonFields::read(std::string_view, int&, bool);
template bool JsonFields::read(std::string_view, std::int64_t&, bool);
template bool JsonFields::read(std::string_view, std::uint64_t&, bool);
template bool JsonFields::read(std::string_view, double&, bool);
template bool JsonFields::read(std::string_view, bool&, bool);
template bool JsonFields::read(std::string_view, std::string&, bool);
template bool JsonFields::read(std::string_view, std::vector<int>&, bool);
template bool JsonFields::read(std::string_view, std::map<std::string, double>&, bool);
template bool JsonFields::read(std::string_view, std::map<std::string, std::string>&, bool);

bool JsonFields::read_spelling(const Field& f, std::span<const std::string_view> names, std::size_t& index) {
  std::string text;
  if (find(f.key, f.required) == nullptr || !read(f.key, text, f.required)) return false;
  const std::string at = field(f.key);
  if (!f.refused.empty() && text == f.refused) {
    error(at, at + "=\"" + text + "\" " + std::string(f.refused_why));
    return false;
  }
  const auto it = std::find(names.begin(), names.end(), text);
  if (it == names.end()) {
    std::vector<std::string_view> sorted(names.begin(), names.end());  // listed as before: alphabetically
    std::sort(sorted.begin(), sorted.end());
    std::string list;
    for (const auto name : sorted) list += (list.empty() ? "" : ", ") + std::string(name);
    error(at, at + "=\"" + text + "\" is not one of: " + list, ConfigErrorKind::type);
    return false;
  }
  index = static_cast<std::size_t>(it - names.begin());
  return true;
}

const json* JsonFields::object(std::string_view key, bool required) {
  const json* v = find(key, required);
  if (v != nullptr && !v->is_object()) {
    error(field(key), field(key) + " must be a JSON object (got " + v->dump() + ")", ConfigErrorKind::type);
    return nullptr;
  }
  return v;
}

void JsonFields::reject_unknown() {
  if (!is_object_) return;
  for (const auto& [key, value] : object_.items())
    if (!known_.count(key)) error(field(key), field(key) + " is not a known field", ConfigErrorKind::unknown_field);
}

}  // namespace ptdp
