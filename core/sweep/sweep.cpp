// Sweep files: strict reading, expansion of axes and points, per-point
// validation and the lookup of published values.
#include "core/sweep/sweep.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <set>

namespace ptdp {

using nlohmann::json;

namespace {

const std::set<std::string> kKeys = {"schema", "name",   "reproduces", "reference", "machine", "mode", "base",
                                     "axes",   "points", "search",     "paper",     "expect",  "note", "train"};

struct Reader {
  std::string where;
  std::vector<std::string> problems;
  void fail(const std::string& field, const std::string& what) { problems.push_back(where + ": " + field + ": " + what); }
};

// Sets a dotted key ("plan.tp") inside a config object.
bool set_dotted(json& cfg, const std::string& key, const json& value) {
  const auto dot = key.find('.');
  if (dot == std::string::npos) return false;
  const std::string section = key.substr(0, dot), field = key.substr(dot + 1);
  if (section != "model" && section != "plan" && section != "optimizer") return false;
  cfg[section][field] = value;
  return true;
}

// The crossed product of the axes: each combination as dotted overrides.
std::vector<json> expand_axes(const json& axes, Reader& r) {
  std::vector<json> combos{json::object()};
  if (!axes.is_array()) {
    r.fail("axes", "must be a list of axis objects");
    return {};
  }
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const std::string at = "axes[" + std::to_string(a) + "]";
    if (!axes[a].is_object() || axes[a].empty()) {
      r.fail(at, "must be a non-empty object of field -> list of values");
      return {};
    }
    std::size_t length = 0;
    for (const auto& [key, values] : axes[a].items()) {
      if (!values.is_array() || values.empty()) r.fail(at + "." + key, "must be a non-empty list");
      else if (length != 0 && values.size() != length) r.fail(at + "." + key, "zipped lists must have the same length");
      else length = values.size();
    }
    if (!r.problems.empty()) return {};
    std::vector<json> next;
    for (const auto& combo : combos)
      for (std::size_t i = 0; i < length; ++i) {
        json c = combo;
        for (const auto& [key, values] : axes[a].items()) c[key] = values[i];
        next.push_back(c);
      }
    combos = std::move(next);
  }
  return combos;
}

// The points expand_axes and the loop over "points" will make of a
// well-formed file: |points| × each axis's length (its first list: zipped
// lists agree), saturating at INT64_MAX. A malformed axis counts as one.
std::int64_t expanded_size(const json& j) {
  const auto most = std::numeric_limits<std::int64_t>::max();
  std::int64_t n = j.contains("points") && j["points"].is_array() ? static_cast<std::int64_t>(j["points"].size()) : 1;
  if (j.contains("axes") && j["axes"].is_array())
    for (const auto& axis : j["axes"]) {
      if (!axis.is_object() || axis.empty() || !axis.begin()->is_array()) continue;
      const auto length = static_cast<std::int64_t>(axis.begin()->size());
      n = length != 0 && n > most / length ? most : n * length;
    }
  return n;
}

std::vector<int> int_list(const json& j, const std::string& field, Reader& r) {
  std::vector<int> out;
  if (!j.is_array() || j.empty()) {
    r.fail(field, "must be a non-empty list of positive integers");
    return out;
  }
  for (const auto& v : j) {
    if (!v.is_number_integer() || v.get<int>() < 1) r.fail(field, "must be a non-empty list of positive integers");
    else out.push_back(v.get<int>());
  }
  return out;
}

void read_search(const json& s, Sweep& sweep, Reader& r) {
  if (!s.is_object()) return r.fail("search", "must be an object");
  for (const auto& [key, value] : s.items()) {
    if (key == "plan.micro_batch") sweep.search_micro_batches = int_list(value, "search." + key, r);
    else if (key == "plan.virtual_stages") sweep.search_virtual_stages = int_list(value, "search." + key, r);
    else if (key == "split_tp_pp") sweep.search_split = value.is_boolean() && value.get<bool>();
    else r.fail("search." + key, "is not a searchable choice (plan.micro_batch, plan.virtual_stages, split_tp_pp)");
  }
}

void read_train(const json& t, Sweep& sweep, Reader& r) {
  if (!t.is_object()) return r.fail("train", "must be an object {\"iterations\", \"warmup\"}");
  for (const auto& [key, value] : t.items()) {
    if (!value.is_number_integer() || value.get<int>() < 0) r.fail("train." + key, "must be a non-negative integer");
    else if (key == "iterations") sweep.train_iterations = value.get<int>();
    else if (key == "warmup") sweep.train_warmup = value.get<int>();
    else r.fail("train." + key, "is not a known field (iterations, warmup)");
  }
  if (sweep.train_warmup >= sweep.train_iterations) r.fail("train", "warmup must be below iterations");
}

// Why `name` cannot name the sweep's results file (results/<name>.json), or "".
std::string name_problem(const std::string& name) {
  const bool safe = !name.empty() && name.size() <= 100 && name.front() != '.' &&
                    std::all_of(name.begin(), name.end(), [](char ch) {
                      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.';
                    });
  return safe ? "" : "must be a file name of letters, digits, '_', '-' and '.', not starting with '.' (got \"" +
                         name + "\")";
}

// The sweep's machine profile is read once: unknown or malformed, the whole sweep is refused.
void check_machine(const std::string& machine, const std::filesystem::path& machines_dir, Reader& r) {
  try {
    load_machine(machine, machines_dir);
  } catch (const ConfigRefused& e) {
    for (const auto& err : e.errors()) r.fail("machine", err.message);
  }
}

json read_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw SweepRefused({file.string() + ": cannot be read"});
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw SweepRefused({file.string() + ": not valid JSON: " + e.what()});
  }
}

void resolve_point(SweepPoint& p, const json& paper, const json* experiment, const std::filesystem::path& machines) {
  try {
    p.config = config_from_json(p.config_json, machines);
    p.errors = validate(p.config);
  } catch (const ConfigRefused& e) {
    p.errors = e.errors();
    return;
  }
  json resolved = to_json(p.config);
  resolved["tag"] = p.tags;
  p.series = fill_template(paper.value("series", ""), resolved, p.index);
  p.label = fill_template(paper.value("label", std::to_string(p.index)), resolved, p.index);
  if (experiment == nullptr || !paper.contains("pointer")) return;
  const json::json_pointer ptr(fill_template(paper["pointer"].get<std::string>(), resolved, p.index));
  if (experiment->contains(ptr) && experiment->at(ptr).is_number()) p.paper = experiment->at(ptr).get<double>();
}

}  // namespace

SweepRefused::SweepRefused(std::vector<std::string> problems)
    : std::runtime_error(problems.empty() ? "sweep refused" : problems.front()), problems_(std::move(problems)) {}

int Sweep::valid_points() const {
  int n = 0;
  for (const auto& p : points) n += p.errors.empty() ? 1 : 0;
  return n;
}

std::string fill_template(const std::string& text, const json& config, int index) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto close = text.find('}', i);
    if (text[i] != '{' || close == std::string::npos) {
      out += text[i];
      continue;
    }
    const std::string key = text.substr(i + 1, close - i - 1);
    std::string value = "?";
    if (key == "point") value = std::to_string(index);
    const auto dot = key.find('.');
    if (dot != std::string::npos && config.contains(key.substr(0, dot)) &&
        config[key.substr(0, dot)].contains(key.substr(dot + 1))) {
      const json& v = config[key.substr(0, dot)][key.substr(dot + 1)];
      value = v.is_string() ? v.get<std::string>() : v.dump();
    }
    out += value;
    i = close;
  }
  return out;
}

Sweep load_sweep(const std::filesystem::path& file, const std::filesystem::path& machines_dir,
                 const json* reference, std::int64_t max_points) {
  const json j = read_file(file);
  Reader r{file.string(), {}};
  if (!j.is_object()) throw SweepRefused({file.string() + ": must be a JSON object"});
  if (const std::int64_t n = expanded_size(j); n > max_points)
    throw SweepRefused({file.string() + ": expands to " + std::to_string(n) + " points (points × axes), more than "
                        "--max-points=" + std::to_string(max_points) + "; split the sweep or raise --max-points"});
  for (const auto& [key, value] : j.items())
    if (!kKeys.count(key)) r.fail(key, "is not a known field");
  if (j.value("schema", "") != kSweepSchema) r.fail("schema", std::string("must be \"") + kSweepSchema + "\"");
  Sweep s;
  s.file = file;
  if (j.contains("name") && !j["name"].is_string()) r.fail("name", "must be a string");
  else s.name = j.value("name", file.stem().string());
  if (const std::string why = name_problem(s.name); !why.empty()) r.fail("name", why);
  s.reproduces = j.value("reproduces", "");
  s.reference = j.value("reference", "");
  s.note = j.value("note", "");
  if (const auto mode = sweep_mode_from_string(j.value("mode", "project"))) s.mode = *mode;
  else r.fail("mode", "must be measure, project or auto");
  if (!j.contains("machine") || !j["machine"].is_string()) r.fail("machine", "must name a machine profile");
  else check_machine(s.machine = j["machine"], machines_dir, r);
  if (!j.contains("base") || !j["base"].is_object()) r.fail("base", "must be an object {\"model\", \"plan\"}");
  const json paper = j.value("paper", json::object());
  s.metric = paper.value("metric", s.metric);
  if (j.contains("search")) read_search(j["search"], s, r);
  if (j.contains("train")) read_train(j["train"], s, r);
  std::vector<json> combos = j.contains("axes") ? expand_axes(j["axes"], r) : std::vector<json>{json::object()};
  std::vector<json> points{json::object()};
  if (j.contains("points")) {
    if (!j["points"].is_array() || j["points"].empty()) r.fail("points", "must be a non-empty list of objects");
    else points = j["points"].get<std::vector<json>>();
  }
  const json* experiment = nullptr;
  if (reference != nullptr && !s.reference.empty()) {
    if (!reference->contains(s.reference)) r.fail("reference", "\"" + s.reference + "\" is not an experiment of the reference");
    else experiment = &(*reference)[s.reference];
  }
  if (!r.problems.empty()) throw SweepRefused(r.problems);
  for (const auto& point : points)
    for (const auto& combo : combos) {
      SweepPoint p;
      p.index = static_cast<int>(s.points.size());
      p.config_json = j["base"];
      p.config_json["machine"] = s.machine;
      p.expect = j.value("expect", json::object());
      json overrides = combo;
      for (const auto& [key, value] : point.items()) {
        if (key == "expect") p.expect = value;
        else overrides[key] = value;
      }
      for (const auto& [key, value] : overrides.items())
        if (key.rfind("tag.", 0) == 0) p.tags[key.substr(4)] = value;
        else if (!set_dotted(p.config_json, key, value))
          r.fail("point " + std::to_string(p.index), "\"" + key + "\" is not a model.*, plan.* or optimizer.* field");
      p.overrides = overrides;
      resolve_point(p, paper, experiment, machines_dir);
      s.points.push_back(std::move(p));
    }
  // A field the config does not know came from the sweep itself: the file is malformed.
  for (const auto& p : s.points)
    for (const auto& e : p.errors)
      if (e.kind == ConfigErrorKind::unknown_field)
        r.fail("point " + std::to_string(p.index), e.message);
  if (!r.problems.empty()) throw SweepRefused(r.problems);
  if (s.points.empty()) throw SweepRefused({file.string() + ": the grid is empty"});
  return s;
}

std::string to_string(SweepMode m) {
  switch (m) {
    case SweepMode::measure: return "measure";
    case SweepMode::project: return "project";
    case SweepMode::automatic: return "auto";
  }
  return "?";
}

std::optional<SweepMode> sweep_mode_from_string(const std::string& text) {
  for (const SweepMode m : {SweepMode::measure, SweepMode::project, SweepMode::automatic})
    if (to_string(m) == text) return m;
  return std::nullopt;
}

std::string to_string(PointStatus s) {
  switch (s) {
    case PointStatus::ok: return "ok";
    case PointStatus::does_not_fit: return "does_not_fit";
    case PointStatus::refused: return "refused";
    case PointStatus::failed: return "failed";
    case PointStatus::timeout: return "timeout";
    case PointStatus::oom: return "oom";
  }
  return "?";
}

PointStatus point_status_from_string(const std::string& text) {
  for (const PointStatus s : {PointStatus::ok, PointStatus::does_not_fit, PointStatus::refused, PointStatus::failed,
                              PointStatus::timeout, PointStatus::oom})
    if (to_string(s) == text) return s;
  return PointStatus::failed;
}

bool is_failure(PointStatus s) {
  return s == PointStatus::failed || s == PointStatus::timeout || s == PointStatus::oom;
}

json load_reference_experiments() {
  std::ifstream in(std::filesystem::path(PTDP_SOURCE_DIR) / "report" / "reference" / "megatron-sc21.json");
  if (!in) return json::object();
  return json::parse(in).value("experiments", json::object());
}

}  // namespace ptdp
