// docs/config-fields.md and fuzz/ptdp.dict's generated section, rendered from
// the field tables by walking default-constructed structs: the defaults shown
// are the structs' own.
#include "core/config/field_docs.h"

#include <cstdio>
#include <map>
#include <set>
#include <typeindex>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.h"

namespace ptdp {

namespace {

using nlohmann::json;

// A number as a bound shows it: integers in full below 10^7, else "%g" (1e+12).
std::string bound_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, x == static_cast<double>(static_cast<long long>(x)) && x < 1e7 ? "%.0f" : "%g", x);
  return buf;
}

// `each`: the bound of every value of a map.
std::string bound_text(const Field& f, bool each) {
  const Bound& b = f.bound;
  std::string text = each && b.kind != Bound::Kind::none ? "each " : "";
  if (b.kind == Bound::Kind::count)
    text = (b.zero.empty() ? "" : "0 (" + std::string(b.zero) + "), or ") + "1 to " + std::to_string(b.max);
  else if (b.kind == Bound::Kind::interval)
    text = (b.lo_open ? "(" : "[") + bound_number(b.lo) + ", " + bound_number(b.hi) + (b.hi_open ? ")" : "]");
  if (!text.empty() && !f.when.empty()) text += " when " + std::string(f.when);
  return text;
}

template <class T>
std::string type_text(const T& value) {
  if constexpr (SpelledEnum<T>) {
    std::string names;
    for (const auto name : spellings(value)) names += (names.empty() ? "`" : ", `") + std::string(name) + "`";
    return "one of " + names;
  } else if constexpr (HasFields<T>) return "object";
  else if constexpr (kIsOptional<T>) return "object or null";
  else if constexpr (kIsStructMap<T>) return "object of objects";
  else if constexpr (std::is_same_v<T, std::map<std::string, double>>) return "object of numbers";
  else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) return "object of strings";
  else if constexpr (std::is_same_v<T, std::vector<int>>) return "list of integers";
  else if constexpr (std::is_same_v<T, bool>) return "boolean";
  else if constexpr (std::is_same_v<T, std::string>) return "string";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return "integer >= 0";
  else if constexpr (std::is_integral_v<T>) return "integer";
  else return "number";
}

template <class T>
std::string default_text(const Field& f, const T& value) {
  if (f.required) return "required";
  if constexpr (SpelledEnum<T>) return "`\"" + spelling(value) + "\"`";
  else if constexpr (HasFields<T>) return "";
  else if constexpr (kIsOptional<T>) return "`null`";
  else if constexpr (kIsStructMap<T>) return "`{}`";
  else return "`" + json(value).dump() + "`";
}

std::string meaning_text(const Field& f) {
  std::string text(f.description);
  if (!f.refused.empty()) text += " (\"" + std::string(f.refused) + "\" " + std::string(f.refused_why) + ")";
  if (f.written == Written::unless_empty) text += "; written only when given";
  return text;
}

// One section a struct type, in the order first met (a struct's section
// before those of the structs inside it); a type met again (a link inside and
// between nodes) adds its path to the title.
class Renderer {
 public:
  template <HasFields S>
  void add(const std::string& path, const S& s, const Field* map_field = nullptr) {
    const auto [seen, fresh] = index_.try_emplace(std::type_index(typeid(S)), sections_.size());
    if (!fresh) {
      sections_[seen->second].title += ", `" + path + "`";
      return;
    }
    sections_.push_back({"`" + path + "`", "", ""});
    const std::size_t at = sections_.size() - 1;
    if (map_field != nullptr && !map_field->keys.empty()) {
      sections_[at].notes = "\nThe keys (each " + std::string(map_field->keys_are) + "):\n\n";
      for (const KeyName& k : map_field->keys)
        sections_[at].notes += "- `" + std::string(k.name) + "`: " + std::string(k.meaning) + "\n";
    }
    visit_fields(s, [&](const Field& f, const auto& value) {
      using T = std::remove_cvref_t<decltype(value)>;
      sections_[at].rows += "| `" + std::string(f.key) + "` | " + type_text(value) + " | " + default_text(f, value) +
                            " | " + bound_text(f, kIsMap<T>) + " | " + meaning_text(f) + " |\n";
      const std::string inner = path + "." + std::string(f.key);  // its section follows this one's
      if constexpr (HasFields<T>) add(inner, value);
      else if constexpr (kIsOptional<T>) add(inner, typename T::value_type{});
      else if constexpr (kIsStructMap<T>) add(inner + ".<key>", typename T::mapped_type{}, &f);
    });
  }

  std::string markdown() const {
    std::string out;
    for (const auto& s : sections_)
      out += "\n## " + s.title + "\n\n| key | type | default | bounds | meaning |\n|---|---|---|---|---|\n" + s.rows +
             s.notes;
    return out;
  }

 private:
  struct Section {
    std::string title, rows, notes;
  };

  std::vector<Section> sections_;
  std::map<std::type_index, std::size_t> index_;
};

// Every key of every table, every enum spelling and closed map key, and the
// dotted names sweeps give config fields ("plan.tp").
class DictWords {
 public:
  template <HasFields S>
  void add(const std::string& dotted, const S& s) {
    visit_fields(s, [&](const Field& f, const auto& value) {
      using T = std::remove_cvref_t<decltype(value)>;
      words_.insert(std::string(f.key));
      if (!dotted.empty()) words_.insert(dotted + "." + std::string(f.key));
      if (!f.refused.empty()) words_.insert(std::string(f.refused));
      for (const KeyName& k : f.keys) words_.insert(std::string(k.name));
      if constexpr (SpelledEnum<T>)
        for (const auto name : spellings(value)) words_.insert(std::string(name));
      else if constexpr (HasFields<T>) add("", value);
      else if constexpr (kIsOptional<T>) add("", typename T::value_type{});
      else if constexpr (kIsStructMap<T>) add("", typename T::mapped_type{});
    });
  }
  void insert(const std::string& word) { words_.insert(word); }
  const std::set<std::string>& words() const { return words_; }

 private:
  std::set<std::string> words_;
};

constexpr const char* kDictBegin =
    "# --- Generated from the field tables (core/config/field.h) by ptdp_config_fields --write;\n"
    "# --- test_config_fields.cpp fails when it differs. Edit the tables, not these lines.\n";
constexpr const char* kDictEnd = "# --- End of the generated section.\n";

}  // namespace

std::string config_fields_markdown() {
  Renderer r;
  r.add("model", Model{});
  r.add("plan", Plan{});
  r.add("optimizer", OptimizerConfig{});
  r.add("machine", Machine{});
  return "# Config and machine-profile fields\n\n"
         "<!-- Generated from the field tables (core/config/field.h) by ptdp_config_fields --write;\n"
         "     test_config_fields.cpp fails when this file and the tables differ. Edit the tables. -->\n\n"
         "A config file is one object: `{\"model\": {...}, \"plan\": {...}, \"machine\": NAME or {...}, "
         "\"optimizer\": {...}}`,\n"
         "`optimizer` optional; a machine named NAME is the profile sweeps/machines/NAME.json. Every key is\n"
         "read strictly: an unknown key, a missing required one, a wrong type or a value outside its bounds\n"
         "is refused (exit 2) with the field named, as are the rules across fields (`validate()`:\n"
         "divisibility, schedules, memory). A sweep names a field by its path (`plan.tp`). A result echoes\n"
         "the resolved values under the same keys.\n" +
         r.markdown();
}

std::string config_fields_dict_section() {
  DictWords w;
  for (const char* section : {"model", "plan", "machine", "optimizer"}) w.insert(section);
  w.add("model", Model{});
  w.add("plan", Plan{});
  w.add("optimizer", OptimizerConfig{});
  w.add("", Machine{});
  std::string out = kDictBegin;
  for (const auto& word : w.words()) out += "\"\\\"" + word + "\\\"\"\n";
  return out + kDictEnd;
}

std::string dict_with_config_fields(const std::string& dict) {
  const auto begin = dict.find(kDictBegin);
  const auto end = begin == std::string::npos ? std::string::npos : dict.find(kDictEnd, begin);
  if (end == std::string::npos) return dict + config_fields_dict_section();
  return dict.substr(0, begin) + config_fields_dict_section() + dict.substr(end + std::string(kDictEnd).size());
}

}  // namespace ptdp
