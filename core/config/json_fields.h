// Strict reading of one JSON object into struct fields: each missing field,
// wrong type and unknown key becomes a ConfigError naming its path
// ("plan.tp"), and reading goes on so every problem is reported at once.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.h"

namespace ptdp {

class JsonFields {
 public:
  // `path` is the object's own name ("plan"); errors go to `errors`.
  JsonFields(const nlohmann::json& object, std::string path, ConfigErrors& errors);

  // Each returns false (and records why) when the key is missing or invalid;
  // `out` then keeps its default.
  bool required(const char* key, int& out);
  bool required(const char* key, std::int64_t& out);
  bool required(const char* key, double& out);
  bool required(const char* key, std::string& out);
  bool optional(const char* key, int& out);
  bool optional(const char* key, std::int64_t& out);
  bool optional(const char* key, std::uint64_t& out);
  bool optional(const char* key, double& out);
  bool optional(const char* key, bool& out);
  bool optional(const char* key, std::string& out);
  bool optional(const char* key, std::vector<int>& out);
  bool optional(const char* key, std::map<std::string, double>& out);
  bool optional(const char* key, std::map<std::string, std::string>& out);

  // An enum spelled as one of `names` (index into the list is the value).
  template <class E>
  bool optional_enum(const char* key, E& out, const std::map<std::string, E>& names);

  // The object under `key`, marked as known; nullptr when absent (error if required).
  const nlohmann::json* object(const char* key, bool required);

  // The value under `key` of any type, marked as known; nullptr when absent.
  const nlohmann::json* value(const char* key) { return find(key, false); }

  // Records every key that no reader asked for.
  void reject_unknown();

  std::string field(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  void error(const std::string& field, const std::string& message,
             ConfigErrorKind kind = ConfigErrorKind::rule);

 private:
  const nlohmann::json* find(const char* key, bool required);
  template <class T> bool read(const char* key, T& out, bool required);

  const nlohmann::json& object_;
  std::string path_;
  ConfigErrors& errors_;
  std::set<std::string> known_;
  bool is_object_;
};

template <class E>
bool JsonFields::optional_enum(const char* key, E& out, const std::map<std::string, E>& names) {
  std::string text;
  if (!optional(key, text)) return false;
  if (text.empty() && find(key, false) == nullptr) return true;
  auto it = names.find(text);
  if (it == names.end()) {
    std::string list;
    for (const auto& [name, value] : names) list += (list.empty() ? "" : ", ") + name;
    error(field(key), field(key) + "=\"" + text + "\" is not one of: " + list, ConfigErrorKind::type);
    return false;
  }
  out = it->second;
  return true;
}

}  // namespace ptdp
