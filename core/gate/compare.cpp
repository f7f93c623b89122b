// Comparing two result files: reading either kind into entries, matching BASE
// and NEW by configuration, deltas per matched pair and the regression rule.
#include "core/gate/compare.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "core/config/json_read.h"
#include "core/gate/significance.h"
#include "core/process/outcome.h"
#include "core/results/metric_path.h"
#include "core/results/plausibility.h"
#include "core/results/result_io.h"

namespace ptdp {

namespace {

using json = nlohmann::json;

constexpr const char* kSweepResults = "ptdp.sweep-results/1";
constexpr double kSlackPct = 1e-9;  // a delta exactly at the threshold is not beyond it

// Why entry `e` has no result to compare (a failed or unmeasured point), or "".
std::string missing_result(const CompareEntry& e) {
  if (e.status != Outcome::ok && e.status != Outcome::does_not_fit)
    return "is " + to_string(e.status) + (e.reason.empty() ? "" : " (" + cut_text(e.reason) + ")");
  return e.result.is_null() ? "has no result" : "";
}

std::string described(const CompareEntry& e) { return cut_text(e.label) + " (" + to_string(e.mode) + ")"; }

// Why the matched pair (b, n) cannot be gated, or "": each side's missing
// result or implausible figures (plausibility.h), prefixed by the side; then
// layouts that differ and a label NEW changed (re-tagged).
std::string unusable_pair(const CompareEntry& b, const CompareEntry& n) {
  std::string why;
  const auto add = [&why](const std::string& line) {
    if (why.find(line) == std::string::npos) why += (why.empty() ? "" : "; ") + line;
  };
  const std::initializer_list<std::pair<const char*, const CompareEntry*>> sides = {{"BASE", &b}, {"NEW", &n}};
  for (const auto& [side, e] : sides) {
    if (const std::string missing = missing_result(*e); !missing.empty()) {
      add(std::string(side) + " " + missing);
      continue;
    }
    for (const FigureProblem& p : implausible_figures(e->result)) add(std::string(side) + " " + p.field + " " + p.rule);
  }
  if (!b.result.is_null() && !n.result.is_null())
    if (const std::string layout = layout_difference(b.result, n.result, "BASE", "NEW"); !layout.empty())
      add("layout differs: " + layout);
  if (b.tag != n.tag) add("re-tagged: labelled \"" + cut_text(n.label) + "\" in NEW");
  return why;
}

// What BASE's `b` and NEW's `n`, unmatched in one slot and mode, changed: the
// JSON types of a sweep point's overrides, or a single result's configuration.
std::string slot_change(const CompareEntry& b, const CompareEntry& n) {
  if (!b.pointer.empty())
    return "re-typed: BASE " + b.pointer + " and NEW " + n.pointer + " differ only in the JSON types of their " +
           "overrides (" + cut_text(b.identity) + " and " + cut_text(n.identity) + ")";
  const std::string layout = layout_difference(b.result, n.result, "BASE", "NEW");
  return "layout differs: " +
         (layout.empty() ? "another configuration (the models, plans or machines differ outside the layout)" : layout);
}

// `v` with every scalar as its text: 8, 8.0 and "8" alike (a slot keeps a re-typed override).
std::string untyped_text(const json& v) {
  std::string out;
  if (v.is_object()) {
    for (const auto& [key, x] : v.items()) out += (out.empty() ? "" : ",") + key + ":" + untyped_text(x);
    return "{" + out + "}";
  }
  if (v.is_array()) {
    for (const auto& x : v) out += (out.empty() ? "" : ",") + untyped_text(x);
    return "[" + out + "]";
  }
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", v.get<double>());
    return text;
  }
  return v.dump();
}

std::string text_of(const json& plan, const char* key) {
  const json* v = json_at_path(plan, {key});
  if (v == nullptr) return "?";
  return v->is_string() ? v->get<std::string>() : v->dump();
}

// "t8 p12 d4 b1 v2 interleaved"
std::string plan_summary(const json& plan) {
  return "t" + text_of(plan, "tp") + " p" + text_of(plan, "pp") + " d" + text_of(plan, "dp") + " b" +
         text_of(plan, "micro_batch") + " v" + text_of(plan, "virtual_stages") + " " + text_of(plan, "schedule");
}

CompareEntry single_entry(const JsonAt& doc) {
  const json& model = doc.at("model").object().value();
  const json& plan = doc.at("plan").object().value();
  const json* machine = json_at_path(doc.value(), {"machine", "name"});
  const std::string machine_name = machine != nullptr ? machine->dump() : doc.value().value("machine", json()).dump();
  CompareEntry e;
  e.mode = mode_at(doc);
  if (const std::string why = mode_contradiction(doc.value(), e.mode); !why.empty()) doc.at("mode").refuse(why);
  e.identity = "result " + model.dump() + " " + plan.dump() + " " + machine_name;
  e.slot = "result";
  e.label = plan_summary(plan);
  e.result = doc.value();
  return e;
}

// A point's "status": ok when absent, else an outcome's name (outcome.h); another word is refused.
Outcome status_of(const JsonAt& point) {
  const auto status = point.find("status");
  if (!status) return Outcome::ok;
  const std::string word = status->get<std::string>();
  const Outcome o = outcome_from_string(word);
  if (to_string(o) != word) {
    std::string names;
    for (const std::string_view name : kOutcomeNames) names += (names.empty() ? "" : ", ") + std::string(name);
    status->refuse("is not an outcome (" + names + "; got " + json_excerpt(status->value()) + ")");
  }
  return o;
}

CompareEntry point_entry(const JsonAt& point, const std::string& sweep_name) {
  CompareEntry e;
  const auto result = point.find("result");
  const auto mode = point.find("mode");
  e.mode = mode || !result ? mode_at(point) : mode_at(result->object());
  if (result)
    if (const std::string why = mode_contradiction(result->object().value(), e.mode); !why.empty())
      (mode ? *mode : *result).refuse(why);
  e.status = status_of(point);
  e.reason = point.get<std::string>("reason", "");
  const auto overrides = point.find("overrides");
  const json none = json::object();
  const json& values = overrides ? overrides->object().value() : none;
  e.identity = "sweep " + sweep_name + " " + values.dump();
  e.slot = "sweep " + sweep_name + " " + untyped_text(values);
  e.pointer = point.pointer();
  const std::string label = point.get<std::string>("label", "");
  const std::string series = point.get<std::string>("series", "");
  e.tag = label + "\n" + series;
  const auto index = point.find("index");
  e.label = sweep_name + ":" + (label.empty() ? "point " + (index ? std::to_string(index->get<int>()) : "null") : label) +
            (series.empty() ? "" : " " + series);
  if (result) e.result = result->object().value();
  return e;
}

// The points of a sweep results file; a point repeating an earlier one's
// configuration and mode is refused (the gate would judge one of the two).
std::vector<CompareEntry> sweep_entries(const JsonAt& doc) {
  const auto sweep = doc.find("sweep");
  const std::string sweep_name = sweep ? sweep->get<std::string>("name", "sweep") : "sweep";
  std::vector<CompareEntry> out;
  std::unordered_map<std::string, std::string> seen;  // match_key -> the point's pointer
  for (const JsonAt& p : doc.at("points").elements()) {
    out.push_back(point_entry(p.object(), sweep_name));
    if (const auto [first, fresh] = seen.emplace(match_key(out.back()), p.pointer()); !fresh)
      p.refuse("repeats the configuration and mode of " + first->second + " (" + described(out.back()) +
               "): a point is listed once");
  }
  return out;
}

MetricDelta delta_of(std::optional<double> base, std::optional<double> now) {
  MetricDelta d{base, now, std::nullopt};
  if (base && now && *base != 0) d.delta_pct = (*now - *base) * 100.0 / *base;
  return d;
}

// The first of `metrics` that `r` reports.
std::optional<double> first_of(const json& r, std::initializer_list<const char*> metrics) {
  for (const char* name : metrics)
    if (const auto v = MetricPath(name).of(r)) return v;
  return std::nullopt;
}

// The figure of `metric` on both sides.
MetricDelta delta_of(const CompareEntry& b, const CompareEntry& n, std::initializer_list<const char*> metric) {
  return delta_of(first_of(b.result, metric), first_of(n.result, metric));
}

std::string fixed(double v, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

// The noise test on the pair's iteration-time samples, or why there is none:
// a projection's single value, or too few samples for p to ever reach alpha.
NoiseCheck noise_check(const json& b, const json& n, ResultMode mode, double alpha) {
  const std::vector<double> base = iteration_samples(b), now = iteration_samples(n);
  NoiseCheck c;
  c.base_samples = static_cast<int>(base.size());
  c.new_samples = static_cast<int>(now.size());
  if (!base.empty()) c.base_spread = spread_of(base);
  if (mode != ResultMode::measured) {
    c.not_tested = "a projection: one deterministic value, gated on the threshold alone";
    return c;
  }
  const double floor = base.empty() || now.empty() ? 1 : min_attainable_p(c.base_samples, c.new_samples);
  if (floor > alpha) {
    c.not_tested = "too few samples for the noise test (" + std::to_string(c.base_samples) + " and " +
                   std::to_string(c.new_samples) + ": its smallest p is " + fixed(floor, 3) + " > alpha " +
                   fixed(alpha, 3) + "), gated on the threshold alone";
    return c;
  }
  const RankTest t = mann_whitney_greater(base, now);
  c.p_value = t.p;
  c.exact = t.exact;
  c.beyond_spread = spread_of(now).median > c.base_spread->upper_fence;
  return c;
}

CompareRow make_row(const CompareEntry& b, const CompareEntry& n, double threshold_pct, double alpha) {
  CompareRow row;
  row.identity = b.identity;
  row.label = b.label;
  row.mode = b.mode;
  row.tflops = delta_of(b, n, {"model_tflops_per_gpu"});
  row.iteration_s = delta_of(b, n, {"iteration_s.median"});
  row.memory = delta_of(b, n, {"memory_bytes.peak_measured", "memory_bytes.model.total"});
  row.bubble = delta_of(b, n, {"bubble.measured", "bubble.simulated"});
  row.noise = noise_check(b.result, n.result, b.mode, alpha);
  row.beyond_threshold = regresses(row, threshold_pct);
  const bool not_noise = !row.noise.p_value || (*row.noise.p_value <= alpha && row.noise.beyond_spread);
  row.regressed = row.beyond_threshold && not_noise;
  if (b.status == Outcome::ok && n.status == Outcome::does_not_fit) {
    row.regressed = true;
    row.note = "no longer fits in memory";
  }
  return row;
}

// Each entry's index by match_key; std::runtime_error naming an entry `side` repeats.
std::unordered_map<std::string, std::size_t> index_by_match(const std::vector<CompareEntry>& entries, const char* side) {
  std::unordered_map<std::string, std::size_t> at;
  at.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (!at.emplace(match_key(entries[i]), i).second)
      throw std::runtime_error(std::string(side) + ": " + described(entries[i]) + " appears twice");
  return at;
}

// BASE's entries without a partner of their identity and mode: the same
// identity in another mode is a mode mismatch, an unused NEW entry of the same
// slot and mode a change of types or layout (unusable); the rest were dropped.
void pair_leftovers(const std::vector<const CompareEntry*>& unmatched, const std::vector<CompareEntry>& now,
                    const std::unordered_map<std::string, std::size_t>& now_at, std::vector<bool>& used,
                    Comparison& c) {
  std::unordered_map<std::string, std::vector<std::size_t>> by_slot;  // slot and mode -> unused NEW entries
  for (std::size_t i = 0; i < now.size(); ++i)
    if (!used[i]) by_slot[now[i].slot + "\n" + to_string(now[i].mode)].push_back(i);
  for (const CompareEntry* b : unmatched) {
    bool paired = false;
    for (const ResultMode other : {ResultMode::measured, ResultMode::projected, ResultMode::slice}) {
      const auto it = now_at.find(b->identity + "\n" + to_string(other));
      if (paired || it == now_at.end() || used[it->second]) continue;
      used[it->second] = paired = true;
      c.mode_differs.push_back({b->identity, b->label, b->mode, now[it->second].mode});
    }
    std::vector<std::size_t>& same_slot = by_slot[b->slot + "\n" + to_string(b->mode)];
    while (!paired && !same_slot.empty() && used[same_slot.back()]) same_slot.pop_back();
    if (!paired && !same_slot.empty()) {
      used[same_slot.back()] = paired = true;
      c.unusable.push_back(described(*b) + ": " + slot_change(*b, now[same_slot.back()]));
    }
    if (paired) continue;
    c.only_in_base.push_back(described(*b));
    if (const std::string why = missing_result(*b); !why.empty()) c.unusable.push_back(described(*b) + ": BASE " + why);
  }
}

json to_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json to_json(const MetricDelta& d) {
  return {{"base", to_json(d.base)}, {"new", to_json(d.now)}, {"delta_pct", to_json(d.delta_pct)}};
}

json to_json(const Spread& s) {
  return {{"min", s.min}, {"q1", s.q1}, {"median", s.median}, {"q3", s.q3}, {"max", s.max}, {"upper_fence", s.upper_fence}};
}

json to_json(const NoiseCheck& n, double alpha) {
  json j = {{"test", "mann-whitney-u, one-sided (NEW slower)"},
            {"samples", {{"base", n.base_samples}, {"new", n.new_samples}}},
            {"base_spread_s", n.base_spread ? to_json(*n.base_spread) : json(nullptr)},
            {"p_value", to_json(n.p_value)},
            {"exact", n.p_value ? json(n.exact) : json(nullptr)},
            {"significant", n.p_value ? json(*n.p_value <= alpha) : json(nullptr)},
            {"beyond_spread", n.p_value ? json(n.beyond_spread) : json(nullptr)}};
  if (!n.not_tested.empty()) j["not_tested"] = n.not_tested;
  return j;
}

}  // namespace

std::vector<CompareEntry> compare_entries(const json& doc, const std::string& file) {
  if (!doc.is_object()) throw std::runtime_error(file + ": not a ptdp result: not a JSON object");
  if (!doc.contains("schema")) throw std::runtime_error(file + ": not a ptdp result: no \"schema\"");
  const json& schema = doc["schema"];
  if (schema == kResultSchema) return {single_entry(JsonAt(doc, file))};
  if (schema == kSweepResults) return sweep_entries(JsonAt(doc, file));
  throw std::runtime_error(file + ": not a ptdp result: schema " + json_excerpt(schema));
}

std::vector<CompareEntry> load_compare_entries(const std::filesystem::path& file) {
  return compare_entries(read_json_file(file), file.string());
}

std::string match_key(const CompareEntry& e) { return e.identity + "\n" + to_string(e.mode); }

bool regresses(const CompareRow& row, double threshold_pct) {
  const double limit = threshold_pct + kSlackPct;
  const bool slower = row.tflops.delta_pct && *row.tflops.delta_pct < -limit;
  const bool longer = row.iteration_s.delta_pct && *row.iteration_s.delta_pct > limit;
  return slower || longer;
}

Comparison compare_results(const std::vector<CompareEntry>& base, const std::vector<CompareEntry>& now,
                           double threshold_pct, double alpha) {
  if (!std::isfinite(threshold_pct) || threshold_pct < 0)
    throw std::invalid_argument("the threshold must be a finite number >= 0");
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("alpha must be a number between 0 and 1");
  Comparison c;
  c.threshold_pct = threshold_pct;
  c.alpha = alpha;
  index_by_match(base, "BASE");  // BASE must not repeat an entry either
  const auto now_at = index_by_match(now, "NEW");
  std::vector<bool> used(now.size(), false);
  std::vector<const CompareEntry*> unmatched;
  for (const auto& b : base) {
    const auto it = now_at.find(match_key(b));
    if (it == now_at.end()) {
      unmatched.push_back(&b);
      continue;
    }
    used[it->second] = true;
    const CompareEntry& n = now[it->second];
    if (const std::string why = unusable_pair(b, n); !why.empty()) {
      c.unusable.push_back(described(b) + ": " + why);
      continue;
    }
    c.rows.push_back(make_row(b, n, threshold_pct, alpha));
    if (c.rows.back().regressed) ++c.regressions;
  }
  pair_leftovers(unmatched, now, now_at, used, c);
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (used[i]) continue;
    c.only_in_new.push_back(described(now[i]));
    if (const std::string why = missing_result(now[i]); !why.empty()) c.unusable.push_back(described(now[i]) + ": NEW " + why);
  }
  return c;
}

json to_json(const Comparison& c) {
  json rows = json::array(), modes = json::array();
  for (const auto& r : c.rows) {
    rows.push_back({{"label", r.label}, {"key", r.identity}, {"mode", to_string(r.mode)}, {"regressed", r.regressed},
                    {"beyond_threshold", r.beyond_threshold}, {"noise", to_json(r.noise, c.alpha)},
                    {"model_tflops_per_gpu", to_json(r.tflops)}, {"iteration_s", to_json(r.iteration_s)},
                    {"memory_bytes", to_json(r.memory)}, {"bubble", to_json(r.bubble)}});
    if (!r.note.empty()) rows.back()["note"] = r.note;
  }
  for (const auto& m : c.mode_differs)
    modes.push_back({{"label", m.label}, {"key", m.identity}, {"base_mode", to_string(m.base_mode)}, {"new_mode", to_string(m.new_mode)}});
  return {{"schema", kCompareSchema},   {"threshold_pct", c.threshold_pct}, {"alpha", c.alpha}, {"matched", c.rows.size()},
          {"regressions", c.regressions}, {"rows", rows},                   {"mode_differs", modes},
          {"only_in_base", c.only_in_base}, {"only_in_new", c.only_in_new}, {"unusable", c.unusable}};
}

}  // namespace ptdp
