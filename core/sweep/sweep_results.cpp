// Records of finished points, acceptance bands, and the resumable results file.
#include "core/sweep/sweep_results.h"

#include <chrono>
#include <ctime>

#include "core/config/json_read.h"
#include "core/results/metric_path.h"
#include "core/results/result_io.h"

namespace ptdp {

using nlohmann::json;

namespace {

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

json header(const Sweep& s) {
  return {{"name", s.name},       {"file", s.file.filename().string()}, {"reproduces", s.reproduces},
          {"reference", s.reference}, {"metric", s.metric},             {"machine", s.machine},
          {"note", s.note}};
}

}  // namespace

std::string point_key(const Sweep& sweep, const SweepPoint& point, ResultMode mode) {
  return sweep.name + "#" + std::to_string(point.index) + ":" + to_string(mode) + ":" + point.overrides.dump();
}

Acceptance acceptance(const json& expect, const PointRun& run) {
  if (!expect.is_object() || expect.empty()) return Acceptance::none;
  if (run.status != Outcome::ok) return Acceptance::fail;
  for (const auto& [metric, band] : expect.items()) {
    const auto v = MetricPath(metric).of(run.result);
    if (!v) return Acceptance::fail;
    if (band.contains("min") && *v < band["min"].get<double>()) return Acceptance::fail;
    if (band.contains("max") && *v > band["max"].get<double>()) return Acceptance::fail;
  }
  return Acceptance::pass;
}

namespace {

json acceptance_json(Acceptance a) {
  if (a == Acceptance::none) return nullptr;
  return std::string(to_string(a));
}

}  // namespace

json point_record(const Sweep& sweep, const SweepPoint& point, const PointRun& run) {
  std::optional<double> value;
  if (run.status == Outcome::ok) value = MetricPath(sweep.metric).of(run.result);
  const json v = value ? json(*value) : json(nullptr);
  const bool comparable = value && point.paper && *point.paper != 0;
  const json error = comparable ? json((value.value_or(0) - *point.paper) / *point.paper) : json(nullptr);
  json r = {{"key", point_key(sweep, point, run.mode)},
            {"index", point.index},
            {"mode", to_string(run.mode)},
            {"status", to_string(run.status)},
            {"seconds", run.seconds},
            {"series", point.series},
            {"label", point.label},
            {"overrides", point.overrides},
            {"metric", sweep.metric},
            {"value", v},
            {"paper", point.paper ? json(*point.paper) : json(nullptr)},
            {"error", error},
            {"expect", point.expect.empty() ? json(nullptr) : point.expect},
            {"acceptance", acceptance_json(acceptance(point.expect, run))},
            {"result", run.result}};
  if (!run.reason.empty()) r["reason"] = run.reason;
  return r;
}

SweepResults::SweepResults(const std::filesystem::path& file, const Sweep& sweep) : file_(file) {
  doc_ = {{"schema", kSweepResultsSchema}, {"sweep", header(sweep)}, {"software", software_info()},
          {"updated", utc_now()}, {"points", json::array()}};
  std::error_code ec;
  if (!std::filesystem::exists(file, ec) && !std::filesystem::is_symlink(file, ec)) return;
  const json old = read_json_file(file);
  const JsonAt j(old, file.string());
  if (!old.is_object() || old.value("schema", json()) != kSweepResultsSchema)
    j.refuse("exists and is not a sweep results file (\"schema\": \"" + std::string(kSweepResultsSchema) +
             "\"); move it away or choose another --out");
  const std::string name = j.at("sweep").at("name").get<std::string>();
  if (name != sweep.name)
    j.refuse("holds the results of sweep \"" + name + "\", not \"" + sweep.name + "\"");
  // finished() matches on each record's key: every record must carry one.
  std::size_t i = 0;
  for (const JsonAt& p : j.at("points").elements()) at_.emplace(p.at("key").get<std::string>(), i++);
  doc_["points"] = old["points"];
}

bool SweepResults::finished(const std::string& key) const { return record(key) != nullptr; }

const json* SweepResults::record(const std::string& key) const {
  const auto it = at_.find(key);
  return it == at_.end() ? nullptr : &doc_["points"][it->second];
}

bool SweepResults::put(const std::vector<json>& records) {
  bool changed = false;
  for (const json& r : records) {
    json& points = doc_["points"];
    const auto [it, fresh] = at_.emplace(r["key"].get<std::string>(), points.size());
    if (fresh) points.push_back(r);
    else if (points[it->second] == r) continue;
    else points[it->second] = r;
    changed = true;
  }
  if (!changed) return false;
  doc_["updated"] = utc_now();
  doc_["software"] = software_info();
  write_json_atomic(file_, doc_);
  return true;
}

void SweepResults::add(const json& record) {
  at_.emplace(record["key"].get<std::string>(), doc_["points"].size());
  doc_["points"].push_back(record);
  doc_["updated"] = utc_now();
  doc_["software"] = software_info();
  write_json_atomic(file_, doc_);
}

}  // namespace ptdp
