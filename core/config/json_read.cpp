// Strict parsing (a SAX pass that checks depth and numbers before the
// document is built), bounded file reading, and typed access by JSON pointer.
#include "core/config/json_read.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <unordered_set>

namespace ptdp {

using nlohmann::json;

namespace {

// "/" + the key with "~" and "/" escaped (RFC 6901).
std::string pointer_step(const std::string& key) {
  std::string out = "/";
  for (const char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

// Walks the document as the parser reads it, keeping the pointer of the value
// being read; stops at the first value nested too deep or number out of range.
class Checker final : public json::json_sax_t {
 public:
  explicit Checker(std::string source) : source_(std::move(source)) {}

  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(json::number_integer_t) override { return scalar(); }
  bool number_unsigned(json::number_unsigned_t) override { return scalar(); }
  bool number_float(json::number_float_t x, const json::string_t& text) override {
    if (!std::isfinite(x)) return stop("the number " + text + " overflows a double");
    return scalar();
  }
  bool string(json::string_t&) override { return scalar(); }
  bool binary(json::binary_t&) override { return scalar(); }
  bool start_object(std::size_t) override { return open(true); }
  bool key(json::string_t& k) override {
    frames_.back().key = k;
    // A repeated key would be taken silently, the last one winning (a manifest's
    // second "step" resumed its data at the wrong position): refused instead.
    if (!frames_.back().keys.insert(k).second) return stop("the key " + json_excerpt(json(k)) + " appears twice in one object");
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string& token, const json::exception& e) override {
    if (e.id == 406) return stop("the number " + token + " overflows a double");  // nlohmann's out_of_range.406
    return stop(std::string("not valid JSON: ") + e.what());
  }

  // Throws the refusal when the pass stopped.
  void check() const {
    if (!rule_.empty()) throw JsonRefused(source_, pointer_, rule_);
  }

 private:
  struct Frame {
    bool object;
    std::string key;        // the member being read (objects)
    std::size_t index = 0;  // elements read so far (arrays)
    std::unordered_set<std::string> keys;  // the members read so far (objects)
  };

  bool scalar() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }
  bool open(bool object) {
    if (frames_.size() >= static_cast<std::size_t>(kJsonMaxDepth))
      return stop("nests deeper than " + std::to_string(kJsonMaxDepth) + " levels of arrays and objects");
    frames_.push_back({object, "", 0, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return scalar();
  }
  bool stop(std::string rule) {
    for (const auto& f : frames_) pointer_ += f.object ? pointer_step(f.key) : "/" + std::to_string(f.index);
    rule_ = std::move(rule);
    return false;
  }

  std::string source_, pointer_, rule_;
  std::vector<Frame> frames_;
};

}  // namespace

JsonRefused::JsonRefused(std::string source, std::string pointer, std::string rule)
    : std::runtime_error(cut_text(source) + (pointer.empty() ? "" : ": " + cut_text(pointer)) + ": " + cut_text(rule)),
      source_(std::move(source)),
      pointer_(cut_text(pointer)),
      rule_(cut_text(rule)) {}

json parse_json(const std::string& text, const std::string& source) {
  Checker checker(source);
  if (!json::sax_parse(text, &checker)) {
    checker.check();
    throw JsonRefused(source, "", "not valid JSON");
  }
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // the check pass accepted it: not expected
    throw JsonRefused(source, "", std::string("not valid JSON: ") + e.what());
  }
}

std::string read_json_text(const std::filesystem::path& file) {
  const std::string source = file.string();
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(status))
    throw JsonRefused(source, "", "cannot be read: " + (ec ? ec.message() : std::string("no such file")));
  if (std::filesystem::is_directory(status)) throw JsonRefused(source, "", "is a directory, not a JSON file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw JsonRefused(source, "", "cannot be read");
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {  // bounded also for pipes and devices
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kJsonMaxBytes)
      throw JsonRefused(source, "", "is larger than the limit of " + std::to_string(kJsonMaxBytes >> 20) + " MiB");
  }
  if (in.bad()) throw JsonRefused(source, "", "cannot be read");
  return text;
}

json read_json_file(const std::filesystem::path& file) { return parse_json(read_json_text(file), file.string()); }

std::string json_convert(const json& v, int& out) {
  std::int64_t wide = 0;
  if (auto why = json_convert(v, wide); !why.empty()) return why;
  if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max())
    return "is out of range for a 32-bit integer";
  out = static_cast<int>(wide);
  return "";
}

std::string json_convert(const json& v, std::int64_t& out) {
  if (!v.is_number_integer()) return "must be an integer";
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return "is out of range for a 64-bit integer";
  out = v.get<std::int64_t>();
  return "";
}

std::string json_convert(const json& v, std::uint64_t& out) {
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
    return "must be a non-negative integer";
  out = v.get<std::uint64_t>();
  return "";
}

std::string json_convert(const json& v, double& out) {
  if (!v.is_number()) return "must be a number";
  const double x = v.get<double>();
  if (!std::isfinite(x)) return "must be a finite number";
  out = x;
  return "";
}

std::string json_convert(const json& v, bool& out) {
  if (!v.is_boolean()) return "must be true or false";
  out = v.get<bool>();
  return "";
}

std::string json_convert(const json& v, std::string& out) {
  if (!v.is_string()) return "must be a string";
  out = v.get<std::string>();
  return "";
}

std::string cut_text(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  // Cut before a whole UTF-8 character: messages are also written into JSON
  // (a sweep point's reason, `compare --out`), where a broken one throws.
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

std::string json_excerpt(const json& v) { return cut_text(v.dump(-1, ' ', false, json::error_handler_t::replace), 60); }

JsonAt::JsonAt(const json& value, std::string source, std::string pointer)
    : value_(&value), source_(std::move(source)), pointer_(std::move(pointer)) {}

void JsonAt::refuse(const std::string& rule) const { throw JsonRefused(source_, pointer_, rule); }

const JsonAt& JsonAt::object() const {
  if (!value_->is_object()) refuse("must be a JSON object (got " + json_excerpt(*value_) + ")");
  return *this;
}

const JsonAt& JsonAt::array() const {
  if (!value_->is_array()) refuse("must be a JSON array (got " + json_excerpt(*value_) + ")");
  return *this;
}

JsonAt JsonAt::at(const std::string& key) const {
  const auto found = find(key);
  if (!found) throw JsonRefused(source_, pointer_ + pointer_step(key), "is missing");
  return *found;
}

std::optional<JsonAt> JsonAt::find(const std::string& key) const {
  object();
  const auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return JsonAt(*it, source_, pointer_ + pointer_step(key));
}

std::vector<JsonAt> JsonAt::elements() const {
  array();
  std::vector<JsonAt> out;
  for (std::size_t i = 0; i < value_->size(); ++i)
    out.emplace_back((*value_)[i], source_, pointer_ + "/" + std::to_string(i));
  return out;
}

std::vector<std::pair<std::string, JsonAt>> JsonAt::members() const {
  object();
  std::vector<std::pair<std::string, JsonAt>> out;
  for (const auto& [key, value] : value_->items()) out.emplace_back(key, JsonAt(value, source_, pointer_ + pointer_step(key)));
  return out;
}

template <class T>
T JsonAt::get() const {
  T out{};
  if (const std::string why = json_convert(*value_, out); !why.empty())
    refuse(why + " (got " + json_excerpt(*value_) + ")");
  return out;
}

template int JsonAt::get<int>() const;
template std::int64_t JsonAt::get<std::int64_t>() const;
template std::uint64_t JsonAt::get<std::uint64_t>() const;
template double JsonAt::get<double>() const;
template bool JsonAt::get<bool>() const;
template std::string JsonAt::get<std::string>() const;

}  // namespace ptdp
