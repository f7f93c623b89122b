// The one strict JSON reader. Every file ptdp reads (configs, machine
// profiles, sweeps, sweep results, result files, compare inputs, calibration
// tables) is parsed here: under a size and a depth limit, with numbers that
// overflow a double refused; JsonAt then reads typed values out of the parsed
// document, and every refusal names the file, the JSON pointer and the rule.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptdp {

// The largest file read: far above the largest results file (about 0.5 MB).
inline constexpr std::uintmax_t kJsonMaxBytes = std::uintmax_t{64} << 20;
// The deepest nesting accepted (arrays and objects): committed files nest at most 10 deep.
inline constexpr int kJsonMaxDepth = 64;

// Input refused: `source` (a file, or what the document is), the JSON pointer
// of the offending value ("" for the whole document) and the rule it breaks.
// what(): "SOURCE: POINTER: RULE" (no pointer for the whole document).
class JsonRefused : public std::runtime_error {
 public:
  JsonRefused(std::string source, std::string pointer, std::string rule);
  const std::string& source() const { return source_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& rule() const { return rule_; }

 private:
  std::string source_, pointer_, rule_;
};

// Parses `text`; JsonRefused for a syntax error, nesting deeper than
// kJsonMaxDepth or a number that overflows a double.
nlohmann::json parse_json(const std::string& text, const std::string& source);
// Reads and parses `file` (named as the source); JsonRefused also when it is
// missing, a directory, unreadable or larger than kJsonMaxBytes.
nlohmann::json read_json_file(const std::filesystem::path& file);
// The text of `file`, refused as read_json_file refuses it (for readers that
// mend a file before parsing it).
std::string read_json_text(const std::filesystem::path& file);

// One JSON value converted to a C++ type: "" on success, else the rule it
// breaks ("must be an integer"). Integers must be integral and in range,
// numbers finite: nothing is truncated or wrapped.
std::string json_convert(const nlohmann::json& v, int& out);
std::string json_convert(const nlohmann::json& v, std::int64_t& out);
std::string json_convert(const nlohmann::json& v, std::uint64_t& out);
std::string json_convert(const nlohmann::json& v, double& out);
std::string json_convert(const nlohmann::json& v, bool& out);
std::string json_convert(const nlohmann::json& v, std::string& out);

// A short rendering of a value for messages ("(got ...)"), cut at 60 bytes but
// never inside a UTF-8 character.
std::string json_excerpt(const nlohmann::json& v);
// `text` cut to at most `limit` bytes (never inside a UTF-8 character), with
// "..." where it was cut: every message that echoes input stays short (a
// refusal once echoed a 30 MB string to stderr).
inline constexpr std::size_t kMessageLimit = 400;
std::string cut_text(const std::string& text, std::size_t limit = kMessageLimit);

// A value inside a parsed document and where it sits. Readers that stop at
// the first problem walk a document with it; each accessor refuses
// (JsonRefused) with the pointer of the value it was asked about.
class JsonAt {
 public:
  JsonAt(const nlohmann::json& value, std::string source, std::string pointer = "");

  const nlohmann::json& value() const { return *value_; }
  const std::string& source() const { return source_; }
  const std::string& pointer() const { return pointer_; }

  // This value when it is an object (or array); refused otherwise.
  const JsonAt& object() const;
  const JsonAt& array() const;
  // Member `key` of this object: refused when this is no object or `key` is missing.
  JsonAt at(const std::string& key) const;
  // Member `key`, or nullopt when it is absent or null; refused when this is no object.
  std::optional<JsonAt> find(const std::string& key) const;
  // The elements of this array and the members of this object (refused otherwise).
  std::vector<JsonAt> elements() const;
  std::vector<std::pair<std::string, JsonAt>> members() const;

  // This value as T (int, std::int64_t, std::uint64_t, double, bool, std::string).
  template <class T> T get() const;
  // Member `key` as T, `fallback` when absent or null.
  template <class T> T get(const std::string& key, T fallback) const {
    const auto v = find(key);
    return v ? v->get<T>() : std::move(fallback);
  }

  [[noreturn]] void refuse(const std::string& rule) const;

 private:
  const nlohmann::json* value_;
  std::string source_, pointer_;
};

}  // namespace ptdp
