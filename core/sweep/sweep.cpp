// Sweep files: strict reading, expansion of axes and points, per-point
// validation and the lookup of published values.
#include "core/sweep/sweep.h"

#include <limits>
#include <set>

#include "core/config/bounds.h"
#include "core/config/data_root.h"
#include "core/config/json_read.h"
#include "core/results/metric_path.h"

namespace ptdp {

using nlohmann::json;

namespace {

const std::set<std::string> kKeys = {"schema", "name",   "reproduces", "reference", "machine", "mode", "base",
                                     "axes",   "points", "search",     "paper",     "expect",  "note", "train"};
const std::set<std::string> kPaperKeys = {"metric", "pointer", "series", "label"};

// Problems of a sweep file, each naming the file and the JSON pointer. A
// section read through JsonAt stops at its first problem; the others go on.
struct Reader {
  std::string where;
  std::vector<std::string> problems;
  void fail(const std::string& pointer, const std::string& what) { problems.push_back(where + ": " + pointer + ": " + what); }
  template <class F> void section(F&& read) {
    try {
      read();
    } catch (const JsonRefused& e) {
      problems.push_back(e.what());
    }
  }
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
std::vector<json> expand_axes(const JsonAt& axes) {
  std::vector<json> combos{json::object()};
  for (const JsonAt& axis : axes.elements()) {
    if (axis.object().value().empty()) axis.refuse("must be a non-empty object of field -> list of values");
    std::size_t length = 0;
    for (const auto& [key, values] : axis.members()) {
      if (values.array().value().empty()) values.refuse("must be a non-empty list");
      if (length != 0 && values.value().size() != length) values.refuse("zipped lists must have the same length");
      length = values.value().size();
    }
    std::vector<json> next;
    for (const auto& combo : combos)
      for (std::size_t i = 0; i < length; ++i) {
        json c = combo;
        for (const auto& [key, values] : axis.value().items()) c[key] = values[i];
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

// A searched choice: a non-empty list of sizes, each in [1, kMaxSize] (never truncated).
std::vector<int> size_list(const JsonAt& j) {
  std::vector<int> out;
  if (j.array().value().empty()) j.refuse("must be a non-empty list of positive integers");
  for (const JsonAt& v : j.elements()) {
    const std::int64_t x = v.get<std::int64_t>();
    if (x < 1 || x > kMaxSize) v.refuse("must be in [1, " + std::to_string(kMaxSize) + "] (got " + std::to_string(x) + ")");
    out.push_back(static_cast<int>(x));
  }
  return out;
}

void read_search(const JsonAt& s, Sweep& sweep) {
  for (const auto& [key, value] : s.members()) {
    if (key == "plan.micro_batch") sweep.search_micro_batches = size_list(value);
    else if (key == "plan.virtual_stages") sweep.search_virtual_stages = size_list(value);
    else if (key == "split_tp_pp") sweep.search_split = value.get<bool>();
    else value.refuse("is not a searchable choice (plan.micro_batch, plan.virtual_stages, split_tp_pp)");
  }
}

void read_train(const JsonAt& t, Sweep& sweep) {
  for (const auto& [key, value] : t.members()) {
    const int n = value.get<int>();
    if (n < 0) value.refuse("must be a non-negative integer (got " + std::to_string(n) + ")");
    if (key == "iterations") sweep.train_iterations = n;
    else if (key == "warmup") sweep.train_warmup = n;
    else value.refuse("is not a known field (iterations, warmup)");
  }
  if (sweep.train_warmup >= sweep.train_iterations) t.refuse("warmup must be below iterations");
}

// The sweep's machine profile is read once: unknown or malformed, the whole sweep is refused.
void check_machine(const JsonAt& machine, const std::filesystem::path& machines_dir, Reader& r) {
  try {
    load_machine(machine.get<std::string>(), machines_dir);
  } catch (const ConfigRefused& e) {
    for (const auto& err : e.errors()) r.fail(machine.pointer(), err.message);
  }
}

// Acceptance bands: {"metric": {"min": x, "max": y}}, either bound optional.
json read_expect(const JsonAt& e) {
  for (const auto& [metric, band] : e.members()) {
    if (const std::string why = unknown_metric(metric); !why.empty()) band.refuse(why);
    for (const auto& [key, bound] : band.members()) {
      if (key != "min" && key != "max") bound.refuse("is not a bound (min, max)");
      bound.get<double>();
    }
  }
  return e.value();
}

// "paper": how points find their published values; templates as strings.
json read_paper(const JsonAt& paper, Sweep& sweep) {
  for (const auto& [key, value] : paper.members()) {
    if (!kPaperKeys.contains(key)) value.refuse("is not a known field (metric, pointer, series, label)");
    value.get<std::string>();
  }
  sweep.metric = paper.get<std::string>("metric", sweep.metric);
  if (const std::string why = unknown_metric(sweep.metric); !why.empty()) paper.at("metric").refuse(why);
  if (const auto pointer = paper.find("pointer"); pointer && pointer->get<std::string>().rfind('/', 0) != 0)
    pointer->refuse("must be a JSON pointer, starting with '/' (got " + json_excerpt(pointer->value()) + ")");
  return paper.value();
}

void read_header(const JsonAt& j, const std::filesystem::path& machines_dir, Sweep& s, Reader& r) {
  for (const auto& [key, value] : j.members())
    if (!kKeys.count(key)) r.fail("/" + key, "is not a known field");
  r.section([&] {
    if (j.get<std::string>("schema", "") != kSweepSchema) j.at("schema").refuse(std::string("must be \"") + kSweepSchema + "\"");
  });
  r.section([&] {
    s.name = j.get<std::string>("name", s.file.stem().string());  // the results file is results/<name>.json
    if (const std::string why = file_name_problem(s.name); !why.empty()) {
      const auto name = j.find("name");
      (name ? *name : j).refuse(why);
    }
  });
  r.section([&] { s.reproduces = j.get<std::string>("reproduces", ""); });
  r.section([&] { s.reference = j.get<std::string>("reference", ""); });
  r.section([&] { s.note = j.get<std::string>("note", ""); });
  r.section([&] {
    const auto mode = sweep_mode_from_string(j.get<std::string>("mode", "project"));
    if (!mode) j.at("mode").refuse("must be measure, project or auto");
    s.mode = *mode;
  });
  r.section([&] {
    s.machine = j.at("machine").get<std::string>();
    check_machine(j.at("machine"), machines_dir, r);
  });
  r.section([&] {  // points set dotted fields ("model.hidden") inside these sections: objects or absent
    const JsonAt base = j.at("base").object();
    for (const char* section : {"model", "plan", "optimizer"})
      if (const auto v = base.find(section)) v->object();
  });
}

// The published value of a point: `pointer` filled, looked up in the experiment.
void look_up_paper(SweepPoint& p, const std::string& pointer, const json& resolved, const json& experiment, Reader& r) {
  const std::string filled = fill_template(pointer, resolved, p.index);
  try {
    const json::json_pointer ptr(filled);
    if (experiment.contains(ptr) && experiment.at(ptr).is_number()) p.paper = experiment.at(ptr).get<double>();
  } catch (const json::exception& e) {  // a filled value made it no pointer ("~2", ...)
    r.fail("/paper/pointer", "point " + std::to_string(p.index) + ": \"" + filled + "\" is not a JSON pointer");
  }
}

void resolve_point(SweepPoint& p, const json& paper, const json* experiment, const std::filesystem::path& machines,
                   Reader& r) {
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
  if (experiment != nullptr && paper.contains("pointer"))
    look_up_paper(p, paper["pointer"].get<std::string>(), resolved, *experiment, r);
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

namespace {

// The points list: objects of overrides, each with its own "expect" optional.
std::vector<JsonAt> read_points(const JsonAt& points) {
  if (points.array().value().empty()) points.refuse("must be a non-empty list of objects");
  std::vector<JsonAt> out = points.elements();
  for (const JsonAt& p : out)
    if (const auto e = p.object().find("expect")) read_expect(*e);
  return out;
}

// Every point of the grid: each explicit point crossed with each axes combination.
void expand(const JsonAt& j, const std::vector<JsonAt>& points, const std::vector<json>& combos, const json& paper,
            const json* experiment, const std::filesystem::path& machines_dir, Sweep& s, Reader& r) {
  const json no_point = json::object();
  const std::size_t n = points.empty() ? 1 : points.size();
  for (std::size_t i = 0; i < n; ++i)
    for (const auto& combo : combos) {
      const json& point = points.empty() ? no_point : points[i].value();
      SweepPoint p;
      p.index = static_cast<int>(s.points.size());
      p.config_json = j.value()["base"];
      p.config_json["machine"] = s.machine;
      p.expect = j.value().value("expect", json::object());
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
      resolve_point(p, paper, experiment, machines_dir, r);
      s.points.push_back(std::move(p));
    }
}

}  // namespace

Sweep load_sweep(const std::filesystem::path& file, const std::filesystem::path& machines_dir,
                 const json* reference, std::int64_t max_points) {
  json doc;
  try {
    doc = read_json_file(file);
    JsonAt(doc, file.string()).object();
  } catch (const JsonRefused& e) {
    throw SweepRefused({e.what()});
  }
  if (const std::int64_t n = expanded_size(doc); n > max_points)
    throw SweepRefused({file.string() + ": expands to " + std::to_string(n) + " points (points × axes), more than "
                        "--max-points=" + std::to_string(max_points) + "; split the sweep or raise --max-points"});
  const JsonAt j(doc, file.string());
  Reader r{file.string(), {}};
  Sweep s;
  s.file = file;
  read_header(j, machines_dir, s, r);
  json paper = json::object();
  std::vector<json> combos{json::object()};
  std::vector<JsonAt> points;
  r.section([&] { if (const auto v = j.find("paper")) paper = read_paper(*v, s); });
  r.section([&] { if (const auto v = j.find("expect")) read_expect(*v); });
  r.section([&] { if (const auto v = j.find("search")) read_search(*v, s); });
  r.section([&] { if (const auto v = j.find("train")) read_train(*v, s); });
  r.section([&] { if (const auto v = j.find("axes")) combos = expand_axes(*v); });
  r.section([&] { if (const auto v = j.find("points")) points = read_points(*v); });
  const json* experiment = nullptr;
  if (reference != nullptr && !s.reference.empty()) {
    if (!reference->contains(s.reference)) r.fail("/reference", "\"" + s.reference + "\" is not an experiment of the reference");
    else experiment = &(*reference)[s.reference];
  }
  if (!r.problems.empty()) throw SweepRefused(r.problems);
  expand(j, points, combos, paper, experiment, machines_dir, s, r);
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

// The SC'21 paper's experiments and the modern set's sources in one object, so
// `ptdp sweep` finds the published values of either kind of sweep. Their ids are
// distinct by construction; a clash would silently swap values, so it throws.
json load_reference_experiments() {
  const std::filesystem::path dir = data_root() / "report" / "reference";
  json all = load_reference_experiments(dir / "megatron-sc21.json");
  const json modern = load_reference_experiments(dir / "modern-runs.json");
  for (auto it = modern.begin(); it != modern.end(); ++it) {
    const std::string& id = it.key();
    if (all.contains(id)) throw std::runtime_error("reference experiment \"" + id + "\" is in both megatron-sc21.json and modern-runs.json");
    all[id] = it.value();
  }
  return all;
}

json load_reference_experiments(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return json::object();
  const json doc = read_json_file(file);
  const auto experiments = JsonAt(doc, file.string()).find("experiments");
  return experiments ? experiments->object().value() : json::object();
}

}  // namespace ptdp
